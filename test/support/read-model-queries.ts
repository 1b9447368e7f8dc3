import type { Pool } from 'pg';
import type { StoredToolEvent } from '../../libs/contract/src';
import { openEvents, withoutSealNote } from '../../libs/domain/src';
import { LIVE_SEARCH, openInvocationPayloads, PostgresEventKeys, PostgresSearchProjection, SEARCH_KINDS } from '../../libs/persistence/src';
import { invocationArgumentsSql, invocationResultSql, invocationSealsSql } from '../../libs/persistence/src/read-model-tables';
import { testVaultOf } from './test-keyring';

/** An invocation's payloads as readers see them, wherever they are kept (the row or its events). */
export const INVOCATION_ARGUMENTS = invocationArgumentsSql('invocations');
export const INVOCATION_RESULT = invocationResultSql('invocations');

export async function countRows(pool: Pool, table: 'events' | 'runs' | 'invocations' | 'conversations'): Promise<number> {
  const { rows } = await pool.query<{ n: string }>(`SELECT count(*) AS n FROM ${table}`);
  return Number(rows[0].n);
}

/** A conversation's events as stored, their sealed payloads opened with the tests' keys (as readers see them). */
export async function streamOf(pool: Pool, tenantId: string, conversationId: string) {
  const { rows } = await pool.query<{ event_id: string; stream_position: number; type: string; payload: Record<string, unknown> }>(
    `SELECT event_id, stream_position, type, payload FROM events
     WHERE tenant_id = $1 AND conversation_id = $2 ORDER BY stream_position`,
    [tenantId, conversationId],
  );
  if (!rows.some((r) => r.payload.sealed !== undefined)) return rows;
  const opened = await openEvents(
    rows.map((r) => r.payload as unknown as StoredToolEvent),
    await testVaultOf(pool),
  );
  return rows.map((r, i) => ({ ...r, payload: withoutSealNote(opened[i]) as unknown as Record<string, unknown> }));
}

/** A conversation's invocations with their payloads as readers see them: wherever kept, opened when sealed. */
export async function invocationsOf(pool: Pool, tenantId: string, conversationId: string) {
  const { rows } = await pool.query(
    `SELECT run_id, pair_key, round_index, sequence_index, tool_call_id, tool_name,
            ${INVOCATION_ARGUMENTS} AS arguments, ${INVOCATION_RESULT} AS result, is_error,
            call_event_id, result_event_id, call_after_run_end,
            tenant_id AS "tenantId", conversation_id AS "conversationId", approval_request_reason AS "approvalRequestReason",
            approval_decision_reason AS "approvalDecisionReason", ${invocationSealsSql('invocations')} AS "payloadSeals",
            expired_payloads AS "expiredPayloads"
     FROM invocations WHERE tenant_id = $1 AND conversation_id = $2 ORDER BY run_id, round_index, sequence_index`,
    [tenantId, conversationId],
  );
  const sealed = rows.some((r) => r.payloadSeals !== null);
  const opened = sealed ? await openInvocationPayloads(rows, await testVaultOf(pool)) : rows;
  return opened.map(
    ({
      tenantId: _t,
      conversationId: _c,
      approvalRequestReason: _q,
      approvalDecisionReason: _d,
      payloadSeals: _s,
      expiredPayloads: _e,
      ...row
    }) => row,
  );
}

export async function runsOf(pool: Pool, tenantId: string, conversationId: string) {
  const { rows } = await pool.query(
    `SELECT run_id, status, channel, assistant_message_id, finish_reason, input_tokens, output_tokens, error_code
     FROM runs WHERE tenant_id = $1 AND conversation_id = $2 ORDER BY run_id`,
    [tenantId, conversationId],
  );
  return rows;
}

/**
 * One checksum over every read-model row, each invocation with its payload
 * text as readers get it: equal read models, equal checksums, whether the
 * payloads are kept in the rows or read from the events.
 */
export async function readModelChecksum(pool: Pool): Promise<string> {
  const { rows } = await pool.query<{ checksum: string }>(`
    SELECT md5(
      coalesce((SELECT string_agg(t::text, '|' ORDER BY t::text) FROM conversations t), '') ||
      coalesce((SELECT string_agg(t::text, '|' ORDER BY t::text) FROM runs t), '') ||
      coalesce((SELECT string_agg(t, '|' ORDER BY t) FROM (
        SELECT (to_jsonb(invocations) - 'arguments' - 'result')::text || ${INVOCATION_ARGUMENTS}::text || ${INVOCATION_RESULT}::text AS t
        FROM invocations) i), '')
    ) AS checksum`);
  return rows[0].checksum;
}

/** Every search document of both searches with its key and time: equal when two schemas can answer the same searches. */
export async function searchChecksum(pool: Pool): Promise<string> {
  const sums = [];
  for (const table of [LIVE_SEARCH.words, LIVE_SEARCH.substring]) {
    const { rows } = await pool.query<{ checksum: string; n: number }>(`
      SELECT md5(coalesce(string_agg(t::text, '|' ORDER BY t::text), '')) AS checksum, count(*)::int AS n FROM ${table} t`);
    sums.push(`${rows[0].n}:${rows[0].checksum}`);
  }
  return sums.join(' ');
}

/**
 * Runs both search projections over everything recorded so far, as the
 * service's projectors do after each commit: what a test that records
 * through the store directly does before it searches.
 */
export async function catchUpSearch(pool: Pool, batchSize = 1_000): Promise<void> {
  const events = new PostgresEventKeys(pool);
  for (const kind of SEARCH_KINDS) {
    const projection = new PostgresSearchProjection(pool, kind);
    for (;;) {
      const page = await events.readKeys(await projection.checkpoint(), {}, batchSize);
      if (page.length === 0) break;
      await projection.apply(page);
    }
  }
}
