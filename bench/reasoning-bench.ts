/**
 * What a reasoning model's state costs at rest and on replay: a conversation
 * of --turns turns, each a run of 2 rounds of 2 calls (results ~1 KB), every
 * round with the model's response before its calls carrying ~2 KB of
 * reasoning (an Anthropic thinking block and its signature), recorded
 * through the recorder's own transaction. Measured in one schema, each case
 * its own conversation:
 *
 * - `no responses`: the same conversation recorded without them (the floor);
 * - `turn, open`: the default rule (`reasoning.keep: turn`) while the last
 *   turn still goes on (its reasoning rests, earlier turns' is gone; progress
 *   is replayed per service call, so its answered round replays);
 * - `turn, closed`: the same conversation once its last run answered;
 * - `always`: every round's reasoning kept.
 *
 * Per case: the bytes the conversation's rows take (pg_column_size over its
 * rows in each table, TOAST compression included, indexes not) and what a
 * turn-start replay in the Anthropic format costs (reading the rows, then
 * the replay rules): CPU per replay in this process (the best of several
 * passes) and wall-clock p50/p99. The last line printed is one JSON object.
 *
 *   npm run bench:reasoning [-- --turns 200 --replays 200 --keep]
 */
import { randomBytes, randomUUID } from 'node:crypto';
import type { Pool } from 'pg';
import type { ToolEvent } from '../libs/contract/src';
import { parseReplayPolicy, reasoningRulesOf, replayHistory, type ReplayPolicy } from '../libs/domain/src';
import { PostgresRecordingStore, PostgresReplayReader } from '../libs/persistence/src';
import { o200kTokens } from '../libs/tokenizer/src';
import { seededRandom } from '../test/support/traffic';
import { intOption, parseArgs, percentile, runInBenchSchema } from './bench-support';
import { toolVocabulary } from './seed-data';

const TABLES = ['events', 'conversations', 'runs', 'invocations', 'model_responses', 'model_reasoning'];
const TENANT = 'acme';
const BODY = 'order A-1001 shipped via DHL, parcel in transit, expected delivery Tuesday. '.repeat(13);

function conversation(conversationId: string, turns: number, withResponses: boolean): ToolEvent[] {
  const random = seededRandom(17);
  const vocabulary = toolVocabulary(20_000, random);
  const words = (n: number) => Array.from({ length: n }, () => vocabulary[Math.floor(random() * vocabulary.length)]).join(' ');
  const events: ToolEvent[] = [];
  // Recent enough that no result is past the default 300 s window during the run.
  const start = Date.now() - 120_000;
  let t = 0;
  const occurredAt = () => new Date(start + (t += 20)).toISOString();
  for (let turn = 0; turn < turns; turn += 1) {
    const scope = { tenantId: TENANT, conversationId, channel: 'web', runId: `run-${turn}`, userMessageId: `u-${turn}` };
    const envelope = () => ({ ...scope, eventId: randomUUID(), schemaVersion: 2 as const, occurredAt: occurredAt() });
    for (let round = 0; round < 2; round += 1) {
      if (withResponses)
        events.push({
          ...envelope(),
          type: 'ModelResponseReceived',
          roundIndex: round,
          provider: 'anthropic',
          model: 'claude-sonnet-4-5',
          text: 'Let me look those orders up.',
          // ~1.5 KB of thinking and a ~0.5 KB signature: ~2 KB of reasoning per round.
          reasoning: [{ type: 'thinking', thinking: words(220).slice(0, 1_500), signature: randomBytes(384).toString('base64') }],
        });
      for (let s = 0; s < 2; s += 1)
        events.push({
          ...envelope(),
          type: 'ToolCallRequested',
          roundIndex: round,
          sequenceIndex: s,
          toolCallId: `call_${turn}_${round}_${s}`,
          toolName: 'lookup_order',
          arguments: { orderId: `A-${turn}${round}${s}` },
        });
      for (let s = 0; s < 2; s += 1)
        events.push({
          ...envelope(),
          type: 'ToolResultReceived',
          roundIndex: round,
          sequenceIndex: s,
          toolCallId: `call_${turn}_${round}_${s}`,
          result: { summary: BODY },
          isError: false,
        });
    }
    events.push({ ...envelope(), type: 'RunCompleted', assistantMessageId: `a-${turn}`, finishReason: 'stop' });
  }
  return events;
}

async function record(store: PostgresRecordingStore, events: readonly ToolEvent[], firstOffset: number): Promise<void> {
  for (let from = 0; from < events.length; from += 500) {
    const batch = events.slice(from, from + 500);
    await store.recordBatch({
      consumerGroup: 'bench',
      topic: 'events',
      partition: 0,
      events: batch.map((event, i) => ({ offset: String(firstOffset + from + i), event })),
      nextOffset: String(firstOffset + from + batch.length),
    });
  }
}

/** The bytes one conversation's rows take in each table. */
async function conversationBytes(pool: Pool, conversationId: string): Promise<Record<string, number>> {
  const bytes: Record<string, number> = {};
  for (const table of TABLES) {
    const { rows } = await pool.query<{ bytes: string | null }>(
      `SELECT sum(pg_column_size(t.*))::text AS bytes FROM ${table} t WHERE t.tenant_id = $1 AND t.conversation_id = $2`,
      [TENANT, conversationId],
    );
    bytes[table] = Number(rows[0].bytes ?? 0);
  }
  return bytes;
}

interface ReplayFigures {
  cpuMicroseconds: number;
  p50Ms: number;
  p99Ms: number;
  reasoningRoundsReplayed: number;
  historyTokens: number;
}

/** Turn-start replays of the conversation in the Anthropic format: the rows read, then the rules. */
async function replays(pool: Pool, conversationId: string, policy: ReplayPolicy, count: number, passes = 3): Promise<ReplayFigures> {
  const reader = new PostgresReplayReader(pool);
  const once = async () => {
    const rows = (await reader.readConversation(TENANT, conversationId))!;
    return replayHistory(
      { tenantId: TENANT, conversationId, channel: rows.channel, asOf: Date.now(), format: 'anthropic_messages' },
      rows.runs,
      rows.invocations,
      policy,
      o200kTokens,
      rows.responses,
    );
  };
  const last = await once();
  let cpu = Number.POSITIVE_INFINITY;
  const latencies: number[] = [];
  for (let pass = 0; pass <= passes; pass += 1) {
    const before = process.cpuUsage();
    for (let i = 0; i < count; i += 1) {
      const started = process.hrtime.bigint();
      await once();
      if (pass > 0) latencies.push(Number(process.hrtime.bigint() - started) / 1e6);
    }
    const used = process.cpuUsage(before);
    // The first pass warms the JIT and the database's caches.
    if (pass > 0) cpu = Math.min(cpu, (used.user + used.system) / count);
  }
  latencies.sort((a, b) => a - b);
  return {
    cpuMicroseconds: Math.round(cpu),
    p50Ms: Number(percentile(latencies, 50).toFixed(2)),
    p99Ms: Number(percentile(latencies, 99).toFixed(2)),
    reasoningRoundsReplayed: last.turns.flatMap((turn) => turn.rounds).filter((round) => round.response?.reasoning !== undefined).length,
    historyTokens: last.historyTokens,
  };
}

/** Progress per service call, so the open turn's answered round replays too; reasoning kept as `keep` says. */
function policyWith(keep: 'turn' | 'always'): ReplayPolicy {
  const parsed = parseReplayPolicy({ defaults: { visibility: 'per_service_call', reasoning: { keep } } });
  if (!parsed.ok) throw new Error(parsed.problems.join('; '));
  return parsed.policy;
}

function main(): void {
  const { values } = parseArgs({ options: { turns: { type: 'string' }, replays: { type: 'string' }, keep: { type: 'boolean' } } });
  const turns = intOption(values, 'turns', 200);
  const count = intOption(values, 'replays', 200);
  runInBenchSchema('bench_reasoning', values.keep === true, async ({ pool }) => {
    const cases: Record<string, { bytes: Record<string, number>; totalBytes: number; replay: ReplayFigures }> = {};
    const measure = async (name: string, conversationId: string, policy: ReplayPolicy) => {
      const bytes = await conversationBytes(pool, conversationId);
      const totalBytes = Object.values(bytes).reduce((a, b) => a + b, 0);
      cases[name] = { bytes, totalBytes, replay: await replays(pool, conversationId, policy, count) };
      const { replay } = cases[name];
      const kb = (n: number) => `${(n / 1_000).toFixed(0)} kB`;
      console.log(
        `${name.padEnd(14)} at rest ${kb(totalBytes).padStart(8)} (events ${kb(bytes.events)}, model_reasoning ${kb(bytes.model_reasoning)}); ` +
          `replay ${replay.cpuMicroseconds} us CPU, p50 ${replay.p50Ms} ms, p99 ${replay.p99Ms} ms; ${replay.reasoningRoundsReplayed} rounds with reasoning, ${replay.historyTokens} tokens`,
      );
    };
    let offset = 0;
    const recordAll = async (store: PostgresRecordingStore, events: readonly ToolEvent[]) => {
      await record(store, events, offset);
      offset += events.length;
    };
    const turnRule = policyWith('turn');
    const defaults = new PostgresRecordingStore(pool, undefined, o200kTokens, reasoningRulesOf(turnRule));

    await recordAll(defaults, conversation('no-responses', turns, false));
    await measure('no responses', 'no-responses', turnRule);

    const reasoning = conversation('reasoning-turn', turns, true);
    await recordAll(defaults, reasoning.slice(0, -1));
    await measure('turn, open', 'reasoning-turn', turnRule);
    await recordAll(defaults, reasoning.slice(-1));
    await measure('turn, closed', 'reasoning-turn', turnRule);

    const always = policyWith('always');
    await recordAll(
      new PostgresRecordingStore(pool, undefined, o200kTokens, reasoningRulesOf(always)),
      conversation('reasoning-always', turns, true),
    );
    await measure('always', 'reasoning-always', always);

    const reasoningJsonBytes = reasoning
      .filter((e) => e.type === 'ModelResponseReceived')
      .reduce((sum, e) => sum + Buffer.byteLength(JSON.stringify((e as { reasoning: unknown }).reasoning)), 0);
    console.log(`reasoning published: ${(reasoningJsonBytes / 1_000).toFixed(0)} kB over ${turns * 2} rounds`);
    console.log(JSON.stringify({ bench: 'reasoning', turns, replays: count, reasoningJsonBytes, cases }));
  });
}

main();
