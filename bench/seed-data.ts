import type { Pool } from 'pg';

/**
 * Seeding shortcuts for benchmarks that need a large store quickly: rows
 * written straight with SQL, shaped like recorded traffic (runs of two
 * parallel calls, their results of ~1 KB of words, then RunCompleted).
 */

const WORDS = [
  'order', 'shipped', 'returned', 'invoice', 'refund', 'customer', 'status', 'pending', 'delivered', 'carrier',
  'tracking', 'warehouse', 'payment', 'declined', 'approved', 'subscription', 'renewal', 'cancelled', 'account', 'balance',
  'git', 'commit', 'branch', 'merge', 'conflict', 'diff', 'staged', 'modified', 'untracked', 'rebase',
  'src/app.ts', 'package.json', 'README.md', 'test', 'failed', 'passed', 'error', 'timeout', 'retry', 'deploy',
  'database', 'query', 'index', 'table', 'migration', 'latency', 'throughput', 'cache', 'memory', 'cpu',
  'weather', 'forecast', 'temperature', 'rain', 'wind', 'flight', 'delayed', 'gate', 'boarding', 'hotel',
  'stock', 'price', 'market', 'dividend', 'earnings', 'report', 'quarter', 'revenue', 'growth', 'forecasted',
];
const TOOLS = ['lookup_order', 'git_status', 'run_sql', 'get_weather', 'search_flights', 'get_stock_price', 'read_file', 'send_email'];

const sqlArray = (values: readonly string[]) => `ARRAY[${values.map((v) => `'${v.replace(/'/g, "''")}'`).join(',')}]`;

/** ~`words` words chosen by a hash of (row, salt): the same text on every run. */
const wordsOf = (row: string, salt: number, words: number) =>
  `(SELECT string_agg((${sqlArray(WORDS)})[1 + abs(hashint8(${row} * 1009 + k * 31 + ${salt})) % ${WORDS.length}], ' ')
    FROM generate_series(1, ${words}) k)`;
const toolOf = (row: string) => `(${sqlArray(TOOLS)})[1 + abs(hashint8(${row})) % ${TOOLS.length}]`;

export interface SeedEventsOptions {
  events: number;
  tenants: number;
  /** Words per result (about 7 bytes each). */
  resultWords?: number;
}

/**
 * Appends `events` events to the event store (5 per run, 4 runs per
 * conversation), spread over `tenants` tenants, with stream and global
 * positions as the recorder would give them. The read model is left empty.
 */
export async function seedEvents(pool: Pool, options: SeedEventsOptions, onProgress?: (done: number) => void): Promise<void> {
  const resultWords = options.resultWords ?? 140;
  const chunk = 100_000;
  for (let from = 0; from < options.events; from += chunk) {
    const to = Math.min(options.events, from + chunk);
    await pool.query(
      `WITH e AS (
         SELECT i, i / 5 AS run, i % 5 AS k, i / 20 AS conv, 'seed-tenant-' || (i / 20 % $3::int) AS tenant,
                timestamptz '2026-11-01T00:00:00Z' + (i * interval '10 milliseconds') AS at
         FROM generate_series($1::int, $2::int - 1) i
       )
       INSERT INTO events (global_position, event_id, tenant_id, conversation_id, stream_position, run_id, type, schema_version, occurred_at, payload)
       SELECT i + 1, gen_random_uuid(), tenant, 'seed-conv-' || conv, i % 20 + 1, 'run-' || run,
              (ARRAY['ToolCallRequested','ToolCallRequested','ToolResultReceived','ToolResultReceived','RunCompleted'])[k + 1], 2, at,
              jsonb_build_object('eventId', gen_random_uuid(), 'schemaVersion', 2, 'tenantId', tenant, 'conversationId', 'seed-conv-' || conv,
                                 'channel', 'web', 'runId', 'run-' || run, 'occurredAt', to_json(at))
              || CASE
                   WHEN k < 2 THEN jsonb_build_object('type', 'ToolCallRequested', 'roundIndex', 0, 'sequenceIndex', k, 'toolCallId', 'call_' || run || '_' || k,
                                                      'toolName', ${toolOf('run * 2 + k')}, 'arguments', jsonb_build_object('query', ${wordsOf('i', 1, 25)}))
                   WHEN k < 4 THEN jsonb_build_object('type', 'ToolResultReceived', 'roundIndex', 0, 'sequenceIndex', k - 2, 'toolCallId', 'call_' || run || '_' || (k - 2),
                                                      'result', jsonb_build_object('summary', ${wordsOf('i', 2, resultWords)}), 'isError', hashint8(i) % 31 = 0)
                   ELSE jsonb_build_object('type', 'RunCompleted', 'assistantMessageId', 'msg-' || run, 'finishReason', 'stop',
                                           'usage', jsonb_build_array(jsonb_build_object('inputTokens', 1000 + run % 997, 'outputTokens', 50 + run % 89)))
                 END
       FROM e`,
      [from, to, options.tenants],
    );
    onProgress?.(to);
  }
  await pool.query(`SELECT setval('events_global_position_seq', $1::bigint)`, [options.events]);
  await pool.query(
    `INSERT INTO streams (tenant_id, conversation_id, version)
     SELECT tenant_id, conversation_id, max(stream_position) FROM events GROUP BY 1, 2`,
  );
  await pool.query('ANALYZE events');
}
