import type { AuditReader, UsageBucket, UsageReport } from '@toolhistory/domain';
import { AppError, ErrorCode, checkRequestIds, requireArguments } from '@toolhistory/errors';

export interface UsageRequest {
  tenantId: string;
  from?: number;
  to?: number;
  bucket: UsageBucket;
}

/** Longest period per bucket, so one answer stays a reasonable size. */
const MAX_USAGE_PERIOD_MS: Record<UsageBucket, number> = { hour: 31 * 86_400_000, day: 3_660 * 86_400_000 };

const invalid = (message: string) => new AppError(ErrorCode.InvalidArgument, message);
const iso = (ms: number) => new Date(ms).toISOString();

/** GetUsage: calls, errors, durations and tokens per tool and period, for billing. */
export class GetUsage {
  constructor(private readonly reader: AuditReader) {}

  async execute(request: UsageRequest, signal?: AbortSignal): Promise<UsageReport> {
    const { tenantId, from, to, bucket } = request;
    requireArguments({
      tenant_id: tenantId,
      from: from === undefined ? undefined : iso(from),
      to: to === undefined ? undefined : iso(to),
    });
    checkRequestIds({ tenant_id: tenantId });
    if (from! >= to!) throw invalid('from must be before to');
    if (to! - from! > MAX_USAGE_PERIOD_MS[bucket]) {
      throw invalid(`a period of ${bucket} buckets may span at most ${MAX_USAGE_PERIOD_MS[bucket] / 86_400_000} days`);
    }
    return this.reader.usage({ tenantId, from: iso(from!), to: iso(to!), bucket }, signal);
  }
}
