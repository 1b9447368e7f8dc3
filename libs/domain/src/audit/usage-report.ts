/** Usage per tool and period, for billing and capacity dashboards. */
export type UsageBucket = 'hour' | 'day';

export interface UsageRow {
  /** Start of the bucket, ISO-8601 UTC. */
  bucketStart: string;
  toolName: string;
  calls: number;
  errors: number;
  /** Call to result, over the invocations that have both; null when none has. */
  p50DurationMs: number | null;
  p95DurationMs: number | null;
}

export interface UsageReport {
  rows: UsageRow[];
  /** Tokens of the runs that completed within the period. */
  inputTokens: number;
  outputTokens: number;
}

export interface UsageQuery {
  tenantId: string;
  from: string;
  to: string;
  bucket: UsageBucket;
}
