import {
  type AuditReader,
  decodePageToken,
  encodePageToken,
  type InvocationFilter,
  type InvocationRecord,
  pageSizeOf,
} from '@toolhistory/domain';
import { AppError, ErrorCode, checkRequestIds, requireArguments } from '@toolhistory/errors';
import { type AwaitRecorded, awaitRecordedWith, type ReadAfter, READ_MODEL } from '../consistency/await-recorded';

export interface ListInvocationsQuery extends Omit<InvocationFilter, 'from' | 'to'> {
  from?: number;
  to?: number;
  pageSize?: number;
  pageToken?: string;
  /** Answer only once everything through this consistency token is recorded. */
  readAfter?: ReadAfter;
}

export interface InvocationPage {
  invocations: InvocationRecord[];
  nextPageToken: string;
}

const invalid = (message: string) => new AppError(ErrorCode.InvalidArgument, message);
const iso = (ms: number | undefined) => (ms === undefined ? undefined : new Date(ms).toISOString());

/** ListToolInvocations: every invocation of a tenant, filtered, a page at a time; the SQL is behind the AuditReader port. */
export class ListToolInvocations {
  constructor(
    private readonly reader: AuditReader,
    private readonly awaitRecorded?: AwaitRecorded,
  ) {}

  async execute(query: ListInvocationsQuery, signal?: AbortSignal): Promise<InvocationPage> {
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
    await awaitRecordedWith(this.awaitRecorded, query.readAfter, READ_MODEL, signal);
    // One more than asked tells whether another page exists.
    const rows = await this.reader.listInvocations(filter, after.value, pageSize.value + 1, signal);
    const invocations = rows.slice(0, pageSize.value);
    const last = invocations[invocations.length - 1];
    return { invocations, nextPageToken: rows.length > pageSize.value ? encodePageToken(filter, last) : '' };
  }
}
