import type { Pool } from 'pg';
import type { AuditReader, InvocationCursor, InvocationFilter, InvocationRecord, UsageQuery, UsageReport } from '@toolhistory/domain';
import { classifyPostgresError } from './postgres-errors';
import { isoText } from './sql-rows';

const STATUS_CONDITION = {
  pending: 'result_event_id IS NULL',
  succeeded: 'result_event_id IS NOT NULL AND NOT coalesce(is_error, false)',
  error: 'result_event_id IS NOT NULL AND coalesce(is_error, false)',
} as const;

const SELECT_RECORD = `SELECT tenant_id AS "tenantId", conversation_id AS "conversationId", run_id AS "runId", pair_key AS "pairKey",
  round_index AS "roundIndex", sequence_index AS "sequenceIndex", tool_call_id AS "toolCallId", tool_name AS "toolName",
  arguments, result, is_error AS "isError", ${isoText('requested_at')} AS "requestedAt", ${isoText('completed_at')} AS "completedAt",
  ${isoText('at')} AS at, (extract(epoch FROM completed_at - requested_at) * 1000)::float8 AS "durationMs",
  persist, argument_redactions AS "argumentRedactions", result_redactions AS "resultRedactions"
  FROM invocations`;

export class PostgresAuditReader implements AuditReader {
  constructor(private readonly pool: Pool) {}

  async listInvocations(filter: InvocationFilter, after: InvocationCursor | null, limit: number): Promise<InvocationRecord[]> {
    const conditions = ['tenant_id = $1', 'at IS NOT NULL'];
    const values: unknown[] = [filter.tenantId];
    const bind = (value: unknown) => `$${values.push(value)}`;
    if (filter.conversationId) conditions.push(`conversation_id = ${bind(filter.conversationId)}`);
    if (filter.runId) conditions.push(`run_id = ${bind(filter.runId)}`);
    if (filter.toolName) conditions.push(`tool_name = ${bind(filter.toolName)}`);
    if (filter.status) conditions.push(STATUS_CONDITION[filter.status]);
    if (filter.from) conditions.push(`at >= ${bind(filter.from)}::timestamptz`);
    if (filter.to) conditions.push(`at < ${bind(filter.to)}::timestamptz`);
    if (after) {
      conditions.push(
        `(at, conversation_id, run_id, pair_key) > (${bind(after.at)}::timestamptz, ${bind(after.conversationId)}, ${bind(after.runId)}, ${bind(after.pairKey)})`,
      );
    }
    const text = `${SELECT_RECORD} WHERE ${conditions.join(' AND ')}
      ORDER BY at, conversation_id, run_id, pair_key LIMIT ${bind(limit)}`;
    try {
      const { rows } = await this.pool.query<InvocationRecord>(text, values);
      return rows.map((r) => ({ ...r, durationMs: r.durationMs === null ? null : Math.round(r.durationMs) }));
    } catch (error) {
      throw classifyPostgresError(error);
    }
  }

  async usage(query: UsageQuery): Promise<UsageReport> {
    const values = [query.tenantId, query.from, query.to, query.bucket];
    try {
      const rows = await this.pool.query(
        `SELECT ${isoText("date_trunc($4, at, 'UTC')")} AS "bucketStart", tool_name AS "toolName",
                count(*)::int AS calls, (count(*) FILTER (WHERE is_error))::int AS errors,
                percentile_cont(0.5) WITHIN GROUP (ORDER BY extract(epoch FROM completed_at - requested_at) * 1000) AS "p50DurationMs",
                percentile_cont(0.95) WITHIN GROUP (ORDER BY extract(epoch FROM completed_at - requested_at) * 1000) AS "p95DurationMs"
         FROM invocations
         WHERE tenant_id = $1 AND at >= $2::timestamptz AND at < $3::timestamptz AND tool_name IS NOT NULL
         GROUP BY 1, 2 ORDER BY 1, 2`,
        values,
      );
      const tokens = await this.pool.query<{ input: string; output: string }>(
        `SELECT coalesce(sum(input_tokens), 0) AS input, coalesce(sum(output_tokens), 0) AS output
         FROM runs WHERE tenant_id = $1 AND ended_at >= $2::timestamptz AND ended_at < $3::timestamptz`,
        values.slice(0, 3),
      );
      const round = (v: unknown) => (v === null ? null : Math.round(Number(v)));
      return {
        rows: rows.rows.map((r) => ({ ...r, p50DurationMs: round(r.p50DurationMs), p95DurationMs: round(r.p95DurationMs) })),
        inputTokens: Number(tokens.rows[0].input),
        outputTokens: Number(tokens.rows[0].output),
      };
    } catch (error) {
      throw classifyPostgresError(error);
    }
  }
}
