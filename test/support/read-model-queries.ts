import type { Pool } from 'pg';

export async function countRows(pool: Pool, table: 'events' | 'runs' | 'invocations' | 'conversations'): Promise<number> {
  const { rows } = await pool.query<{ n: string }>(`SELECT count(*) AS n FROM ${table}`);
  return Number(rows[0].n);
}

export async function streamOf(pool: Pool, tenantId: string, conversationId: string) {
  const { rows } = await pool.query<{ event_id: string; stream_position: number; type: string; payload: Record<string, unknown> }>(
    `SELECT event_id, stream_position, type, payload FROM events
     WHERE tenant_id = $1 AND conversation_id = $2 ORDER BY stream_position`,
    [tenantId, conversationId],
  );
  return rows;
}

export async function invocationsOf(pool: Pool, tenantId: string, conversationId: string) {
  const { rows } = await pool.query(
    `SELECT run_id, pair_key, round_index, sequence_index, tool_call_id, tool_name, arguments, result, is_error,
            call_event_id, result_event_id, call_after_run_end
     FROM invocations WHERE tenant_id = $1 AND conversation_id = $2 ORDER BY run_id, round_index, sequence_index`,
    [tenantId, conversationId],
  );
  return rows;
}

export async function runsOf(pool: Pool, tenantId: string, conversationId: string) {
  const { rows } = await pool.query(
    `SELECT run_id, status, channel, assistant_message_id, finish_reason, input_tokens, output_tokens, error_code
     FROM runs WHERE tenant_id = $1 AND conversation_id = $2 ORDER BY run_id`,
    [tenantId, conversationId],
  );
  return rows;
}

/** One checksum over every read-model row: equal read models, equal checksums. */
export async function readModelChecksum(pool: Pool): Promise<string> {
  const { rows } = await pool.query<{ checksum: string }>(`
    SELECT md5(
      coalesce((SELECT string_agg(t::text, '|' ORDER BY t::text) FROM conversations t), '') ||
      coalesce((SELECT string_agg(t::text, '|' ORDER BY t::text) FROM runs t), '') ||
      coalesce((SELECT string_agg(t::text, '|' ORDER BY t::text) FROM invocations t), '')
    ) AS checksum`);
  return rows[0].checksum;
}
