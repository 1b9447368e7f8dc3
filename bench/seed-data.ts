import type { Pool } from 'pg';
import { fillSearchDocuments, LIVE_SEARCH } from '../libs/persistence/src';
import { seededRandom } from '../test/support/traffic';

/**
 * Seeding shortcuts for benchmarks that need a large store quickly: rows
 * written straight with SQL, shaped like recorded traffic (runs of two
 * parallel calls, their results of ~1 KB of words, then RunCompleted).
 */

const WORDS = [
  'order',
  'shipped',
  'returned',
  'invoice',
  'refund',
  'customer',
  'status',
  'pending',
  'delivered',
  'carrier',
  'tracking',
  'warehouse',
  'payment',
  'declined',
  'approved',
  'subscription',
  'renewal',
  'cancelled',
  'account',
  'balance',
  'git',
  'commit',
  'branch',
  'merge',
  'conflict',
  'diff',
  'staged',
  'modified',
  'untracked',
  'rebase',
  'src/app.ts',
  'package.json',
  'README.md',
  'test',
  'failed',
  'passed',
  'error',
  'timeout',
  'retry',
  'deploy',
  'database',
  'query',
  'index',
  'table',
  'migration',
  'latency',
  'throughput',
  'cache',
  'memory',
  'cpu',
  'weather',
  'forecast',
  'temperature',
  'rain',
  'wind',
  'flight',
  'delayed',
  'gate',
  'boarding',
  'hotel',
  'stock',
  'price',
  'market',
  'dividend',
  'earnings',
  'report',
  'quarter',
  'revenue',
  'growth',
  'forecasted',
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

/**
 * Texts of `words` words drawn from `vocabulary` by Zipf's law with
 * exponent 1: rank r comes with probability about 1 / (r ln V), as word
 * frequencies in text do (a log-uniform draw). Made here rather than in
 * SQL, where a lookup per word costs minutes per million rows.
 */
function zipfTexts(vocabulary: readonly string[], random: () => number, count: number, words: number): string[] {
  const texts: string[] = [];
  for (let i = 0; i < count; i += 1) {
    const picked: string[] = [];
    for (let k = 0; k < words; k += 1)
      picked.push(vocabulary[Math.min(vocabulary.length, Math.floor(Math.pow(vocabulary.length + 1, random()))) - 1]);
    texts.push(picked.join(' '));
  }
  return texts;
}

export interface SeedInvocationsOptions {
  invocations: number;
  tenants: number;
  resultWords?: number;
  /**
   * Words drawn from this vocabulary by Zipf's law (most common first);
   * without it, uniformly from a 70-word one, so every word is in nearly
   * every document: the worst case for search.
   */
  vocabulary?: readonly string[];
}

/** The opening of a tool event's JSON built in SQL from the seed's columns; the caller adds its own members and the closing parenthesis. */
const envelope = (id: string, type: string, at: string) =>
  `json_build_object('eventId', ${id}, 'schemaVersion', 2, 'type', '${type}', 'tenantId', tenant, 'conversationId', conv, 'channel', 'web',
     'runId', run, 'occurredAt', ${at}, 'roundIndex', round, 'sequenceIndex', seq, 'toolCallId', call`;

/**
 * Writes `invocations` completed invocations straight into the read model
 * (with their conversations and runs) and their call and result events
 * into the event store, which holds their payloads: 10 per run, 4 runs
 * per conversation, over `tenants` tenants and the 30 days before
 * 2026-11-01. Arguments of ~25 words and results of ~`resultWords` words,
 * so full-text search has realistic documents.
 */
export async function seedInvocations(pool: Pool, options: SeedInvocationsOptions, onProgress?: (done: number) => void): Promise<void> {
  const resultWords = options.resultWords ?? 140;
  const perConversation = 40;
  const conversations = Math.ceil(options.invocations / perConversation);
  await pool.query(
    `INSERT INTO conversations (tenant_id, conversation_id, channel, first_event_at, last_event_at, event_count)
     SELECT 'seed-tenant-' || (c % $2::int), 'seed-conv-' || c, 'web', timestamptz '2026-10-01' + c * interval '1 second', timestamptz '2026-10-01' + c * interval '1 second', 100
     FROM generate_series(0, $1::int - 1) c`,
    [conversations, options.tenants],
  );
  await pool.query(
    `INSERT INTO runs (tenant_id, conversation_id, run_id, channel, status, started_at, last_event_at, ended_at, assistant_message_id, finish_reason, input_tokens, output_tokens)
     SELECT 'seed-tenant-' || (c % $2::int), 'seed-conv-' || c, 'run-' || r, 'web', 'completed', t, t, t, 'msg', 'stop', 1000, 100
     FROM generate_series(0, $1::int - 1) c, generate_series(0, 3) r, LATERAL (SELECT timestamptz '2026-10-01' + (c * 4 + r) * interval '1 second' * 2592000 / ($1::int * 4)) AS x(t)`,
    [conversations, options.tenants],
  );
  const vocabulary = options.vocabulary;
  const random = seededRandom(3);
  // Arguments and results: from the 70-word vocabulary in SQL, or from the Zipf one made here and sent per chunk.
  const text = (salt: number, words: number, param: number) =>
    vocabulary ? `($${param}::text[])[i - $1::int + 1]` : wordsOf('i', salt, words);
  const chunk = vocabulary ? 10_000 : 50_000;
  for (let from = 0; from < options.invocations; from += chunk) {
    const to = Math.min(options.invocations, from + chunk);
    const texts = vocabulary ? [zipfTexts(vocabulary, random, to - from, 25), zipfTexts(vocabulary, random, to - from, resultWords)] : [];
    // The call and result events hold the payloads; the rows point at them and keep no copy, as the recorder writes them.
    await pool.query(
      `WITH src AS (
         SELECT i, 'seed-tenant-' || (i / ${perConversation} % $3::int) AS tenant, 'seed-conv-' || (i / ${perConversation}) AS conv,
                'run-' || (i % ${perConversation} / 10) AS run, i % 10 / 3 AS round, i % 3 AS seq, 'call_' || i AS call, ${toolOf('i')} AS tool,
                json_build_object('query', ${text(1, 25, 5)}) AS args, json_build_object('summary', ${text(2, resultWords, 6)}) AS res,
                hashint8(i) % 29 = 0 AS failed, t AS requested, t + (abs(hashint8(i)) % 3000) * interval '1 millisecond' AS completed,
                gen_random_uuid() AS call_event, gen_random_uuid() AS result_event
         FROM generate_series($1::int, $2::int - 1) i,
              LATERAL (SELECT timestamptz '2026-10-01' + i * interval '1 second' * 2592000 / $4::int) AS x(t)
       ), appended AS (
         INSERT INTO events (global_position, event_id, tenant_id, conversation_id, stream_position, run_id, type, schema_version, occurred_at, payload)
         SELECT 2 * i + k + 1, e.id, tenant, conv, 2 * (i % ${perConversation}) + k + 1, run, e.type, 2, e.at, e.payload
         FROM src, LATERAL (VALUES
           (0, call_event, 'ToolCallRequested', requested,
            ${envelope('call_event', 'ToolCallRequested', 'requested')}, 'toolName', tool, 'arguments', args)),
           (1, result_event, 'ToolResultReceived', completed,
            ${envelope('result_event', 'ToolResultReceived', 'completed')}, 'result', res, 'isError', failed))
         ) AS e(k, id, type, at, payload)
       )
       INSERT INTO invocations (tenant_id, conversation_id, run_id, pair_key, round_index, sequence_index, tool_call_id, tool_name,
                                is_error, requested_at, completed_at, call_event_id, result_event_id)
       SELECT tenant, conv, run, 'id:' || call, round, seq, call, tool, failed, requested, completed, call_event, result_event FROM src`,
      [from, to, options.tenants, options.invocations, ...texts],
    );
    onProgress?.(to);
  }
  const filling = Date.now();
  await fillSearchTable(pool);
  console.log(`  search documents written and indexed in ${((Date.now() - filling) / 1000).toFixed(1)} s`);
  await pool.query('ANALYZE');
}

/** The search projections' documents for every seeded invocation, written in one pass and indexed once, as a rebuild does. */
async function fillSearchTable(pool: Pool): Promise<void> {
  const { rows } = await pool.query<{ name: string; definition: string }>(
    `SELECT indexname AS name, indexdef AS definition FROM pg_indexes
     WHERE schemaname = current_schema() AND tablename = ANY($1::text[]) AND indexname NOT LIKE '%\\_pkey'`,
    [[LIVE_SEARCH.words, LIVE_SEARCH.substring]],
  );
  for (const index of rows) await pool.query(`DROP INDEX "${index.name}"`);
  await fillSearchDocuments(pool, LIVE_SEARCH, 2);
  for (const index of rows) await pool.query(index.definition);
}

/**
 * A vocabulary of `size` distinct words and identifiers as tool output has
 * them (plain words, snake_case and camelCase names, paths, ids, numbers),
 * in a fixed shuffled order: its rank is the Zipf rank.
 */
export function toolVocabulary(size: number, random: () => number): string[] {
  const syllables = [
    'ka',
    'lo',
    'mi',
    'ne',
    'ru',
    'sa',
    'ti',
    'vo',
    'ber',
    'dan',
    'gel',
    'hor',
    'jun',
    'pex',
    'qua',
    'wis',
    'zor',
    'fen',
    'cal',
    'dro',
  ];
  const word = () =>
    Array.from({ length: 2 + Math.floor(random() * 3) }, () => syllables[Math.floor(random() * syllables.length)]).join('');
  const shapes: Array<() => string> = [
    word,
    word,
    word,
    () => `${word()}_${word()}`,
    () => `${word()}${word().replace(/^./, (c) => c.toUpperCase())}`,
    () => `src/${word()}/${word()}.ts`,
    () => `${word().slice(0, 3)}_${Math.floor(random() * 0xffffff).toString(16)}`,
    () => String(Math.floor(random() * 1_000_000)),
  ];
  const words = new Set<string>();
  while (words.size < size) words.add(shapes[Math.floor(random() * shapes.length)]());
  return [...words];
}
