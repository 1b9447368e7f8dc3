/**
 * Bytes at rest for one long conversation: 200 turns, each a run of two
 * rounds of two parallel calls with ~1 KB results, then RunCompleted,
 * recorded through the recorder's own transaction (default redaction) and
 * followed by the search projection. Prints the event JSON as received and
 * what each table and its indexes grew by (sizes after minus sizes of the
 * empty schema), and their ratio (target: 2x or less). The last line is
 * one JSON object.
 *
 *   npm run bench:storage -- [--turns 200] [--keep]
 */
import { randomUUID } from 'node:crypto';
import type { Pool } from 'pg';
import type { ToolEvent } from '../libs/contract/src';
import { PostgresRecordingStore } from '../libs/persistence/src';
import { catchUpSearch } from '../test/support/read-model-queries';
import { seededRandom } from '../test/support/traffic';
import { intOption, parseArgs, runInBenchSchema } from './bench-support';
import { toolVocabulary } from './seed-data';

const TABLES = [
  'events',
  'streams',
  'conversations',
  'runs',
  'invocations',
  'invocation_search',
  'invocation_substring',
  'consumer_offsets',
  'projection_checkpoints',
];

function conversation(turns: number): ToolEvent[] {
  const random = seededRandom(11);
  const vocabulary = toolVocabulary(20_000, random);
  const words = (n: number) =>
    Array.from(
      { length: n },
      () => vocabulary[Math.min(vocabulary.length, Math.floor(Math.pow(vocabulary.length + 1, random()))) - 1],
    ).join(' ');
  const scope = { tenantId: 'acme', conversationId: 'long-chat', channel: 'web' };
  const events: ToolEvent[] = [];
  let at = Date.parse('2026-11-23T08:00:00Z');
  const occurredAt = () => new Date((at += 150)).toISOString();
  for (let turn = 0; turn < turns; turn += 1) {
    const runId = `run-${turn}`;
    const envelope = () => ({ ...scope, runId, eventId: randomUUID(), schemaVersion: 2 as const, occurredAt: occurredAt() });
    for (let round = 0; round < 2; round += 1) {
      for (let seq = 0; seq < 2; seq += 1) {
        const toolCallId = `call_${turn}_${round}_${seq}`;
        events.push({
          ...envelope(),
          type: 'ToolCallRequested',
          roundIndex: round,
          sequenceIndex: seq,
          toolCallId,
          toolName: ['lookup_order', 'read_file', 'run_sql', 'get_weather'][(turn + round * 2 + seq) % 4],
          arguments: { query: words(6), limit: 20 },
        });
      }
      for (let seq = 0; seq < 2; seq += 1) {
        events.push({
          ...envelope(),
          type: 'ToolResultReceived',
          roundIndex: round,
          sequenceIndex: seq,
          toolCallId: `call_${turn}_${round}_${seq}`,
          result: { status: 'ok', rows: Array.from({ length: 8 }, (_, i) => ({ id: `${turn}-${round}-${seq}-${i}`, text: words(7) })) },
          isError: false,
        });
      }
    }
    events.push({
      ...envelope(),
      type: 'RunCompleted',
      assistantMessageId: `msg-${turn}`,
      finishReason: 'stop',
      usage: [{ inputTokens: 1200, outputTokens: 90 }],
    });
  }
  return events;
}

async function tableBytes(pool: Pool): Promise<Record<string, number>> {
  const { rows } = await pool.query<{ table: string; bytes: string }>(
    `SELECT t AS table, pg_total_relation_size(to_regclass(t))::text AS bytes FROM unnest($1::text[]) AS t`,
    [TABLES],
  );
  return Object.fromEntries(rows.map((r) => [r.table, Number(r.bytes)]));
}

function main(): void {
  const { values } = parseArgs({ options: { turns: { type: 'string' }, keep: { type: 'boolean' } } });
  const turns = intOption(values, 'turns', 200);
  runInBenchSchema('bench_storage', values.keep === true, async ({ pool }) => {
    const events = conversation(turns);
    const eventJsonBytes = events.reduce((sum, e) => sum + Buffer.byteLength(JSON.stringify(e)), 0);
    const empty = await tableBytes(pool);
    const store = new PostgresRecordingStore(pool);
    for (let from = 0; from < events.length; from += 500) {
      const batch = events.slice(from, from + 500);
      await store.recordBatch({
        consumerGroup: 'bench',
        topic: 'events',
        partition: 0,
        events: batch.map((event, i) => ({ offset: String(from + i), event })),
        nextOffset: String(from + batch.length),
      });
    }
    await catchUpSearch(pool);
    await pool.query('VACUUM ANALYZE');
    const after = await tableBytes(pool);
    const grown = Object.fromEntries(TABLES.map((t) => [t, after[t] - empty[t]]));
    const totalBytes = Object.values(grown).reduce((a, b) => a + b, 0);
    const mb = (bytes: number) => (bytes / 1_000_000).toFixed(2);
    console.log(`${turns} turns, ${events.length} events: ${mb(eventJsonBytes)} MB of event JSON as received`);
    for (const t of TABLES) if (grown[t] > 0) console.log(`  ${t.padEnd(24)} ${mb(grown[t])} MB`);
    const ratio = Math.round((totalBytes / eventJsonBytes) * 100) / 100;
    console.log(`  total                    ${mb(totalBytes)} MB: ${ratio}x the event JSON (target: 2x or less)`);
    console.log(JSON.stringify({ bench: 'storage', turns, events: events.length, eventJsonBytes, tableBytes: grown, totalBytes, ratio }));
  });
}

main();
