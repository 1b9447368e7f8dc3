import {
  AuditReader,
  decodePageToken,
  encodePageToken,
  InvocationFilter,
  InvocationRecord,
  pageSizeOf,
  SearchHit,
  searchQueryOf,
  wholeRedactionMarkers,
  SearchRequest,
  StoredRun,
  UsageBucket,
  UsageReport,
} from '@toolhistory/domain';
import { AppError, ErrorCode, checkRequestIds, requireArguments } from '@toolhistory/errors';

export interface ListInvocationsQuery extends Omit<InvocationFilter, 'from' | 'to'> {
  from?: number;
  to?: number;
  pageSize?: number;
  pageToken?: string;
}

export interface InvocationPage {
  invocations: InvocationRecord[];
  nextPageToken: string;
}

export interface UsageRequest {
  tenantId: string;
  from?: number;
  to?: number;
  bucket: UsageBucket;
}

/** Longest period per bucket, so one answer stays a reasonable size. */
const MAX_USAGE_PERIOD_MS: Record<UsageBucket, number> = { hour: 31 * 86_400_000, day: 3_660 * 86_400_000 };

const invalid = (message: string) => new AppError(ErrorCode.InvalidArgument, message);
const iso = (ms: number | undefined) => (ms === undefined ? undefined : new Date(ms).toISOString());

/** The audit and billing queries: validation and paging here, SQL behind the AuditReader port. */
export class QueryAudit {
  constructor(private readonly reader: AuditReader) {}

  async listInvocations(query: ListInvocationsQuery, signal?: AbortSignal): Promise<InvocationPage> {
    requireArguments({ tenant_id: query.tenantId });
    checkRequestIds({ tenant_id: query.tenantId, conversation_id: query.conversationId, run_id: query.runId, tool_name: query.toolName });
    if (query.from !== undefined && query.to !== undefined && query.from >= query.to) throw invalid('from must be before to');
    const pageSize = pageSizeOf(query.pageSize);
    if (!pageSize.ok) throw invalid(pageSize.error);
    const filter: InvocationFilter = {
      tenantId: query.tenantId,
      conversationId: query.conversationId || undefined,
      runId: query.runId || undefined,
      toolName: query.toolName || undefined,
      status: query.status,
      from: iso(query.from),
      to: iso(query.to),
    };
    const after = decodePageToken(filter, query.pageToken);
    if (!after.ok) throw invalid(after.error);
    // One more than asked tells whether another page exists.
    const rows = await this.reader.listInvocations(filter, after.value, pageSize.value + 1, signal);
    const invocations = rows.slice(0, pageSize.value);
    const last = invocations[invocations.length - 1];
    return { invocations, nextPageToken: rows.length > pageSize.value ? encodePageToken(filter, last) : '' };
  }

  async usage(request: UsageRequest, signal?: AbortSignal): Promise<UsageReport> {
    requireArguments({ tenant_id: request.tenantId, from: iso(request.from), to: iso(request.to) });
    checkRequestIds({ tenant_id: request.tenantId });
    const from = request.from!;
    const to = request.to!;
    if (from >= to) throw invalid('from must be before to');
    if (to - from > MAX_USAGE_PERIOD_MS[request.bucket]) {
      throw invalid(`a period of ${request.bucket} buckets may span at most ${MAX_USAGE_PERIOD_MS[request.bucket] / 86_400_000} days`);
    }
    return this.reader.usage({ tenantId: request.tenantId, from: iso(from)!, to: iso(to)!, bucket: request.bucket }, signal);
  }

  /** The runs of one conversation as stored now (the console's timeline). */
  async conversationRuns(tenantId: string, conversationId: string, signal?: AbortSignal): Promise<StoredRun[]> {
    requireArguments({ tenant_id: tenantId, conversation_id: conversationId });
    checkRequestIds({ tenant_id: tenantId, conversation_id: conversationId });
    return this.reader.conversationRuns(tenantId, conversationId, signal);
  }

  /** Full-text search over the tenant's invocations, best first. */
  async search(request: SearchRequest, signal?: AbortSignal): Promise<SearchHit[]> {
    const query = searchQueryOf(request);
    if (!query.ok) throw invalid(query.error);
    const hits = await this.reader.searchInvocations(query.value, signal);
    return hits.map((hit) => ({ ...hit, snippet: wholeRedactionMarkers(hit.snippet, hit.invocation) }));
  }
}
