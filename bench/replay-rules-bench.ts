/**
 * What the replay rules cost per request, in this process, without the
 * database or gRPC: replayHistory over one conversation's rows as the
 * turn-start query reads them, in each format, with the default policy and
 * the real token counter. CPU time, so a busy machine changes it less than
 * wall-clock; the best of several passes.
 *
 *   npm run bench:replay-rules [-- --turns 200 --requests 2000 --rounds 5]
 *
 * The conversation: --turns completed runs of 2 rounds of 2 calls (results
 * ~1 KB, recent), a resumed approval every tenth run, as a 200-turn
 * conversation looks. The last line printed is one JSON object.
 */
import { parseArgs } from 'node:util';
import type { ToolEvent } from '../libs/contract/src';
import { DEFAULT_REPLAY_POLICY, type HistoryFormat, replayHistory } from '../libs/domain/src';
import { o200kTokens } from '../libs/tokenizer/src';
import { readModelOf } from '../libs/domain/src/replay/replay-test-support.fixture';
import { approvalDecided, approvalRequested, runCompleted, toolCall, toolResult } from '../test/support/tool-event-factory';
import { intOption } from './bench-support';

const { values } = parseArgs({ options: { turns: { type: 'string' }, requests: { type: 'string' }, rounds: { type: 'string' } } });
const turns = intOption(values, 'turns', 200);
const requests = intOption(values, 'requests', 2_000);
const rounds = intOption(values, 'rounds', 5);
const FORMATS: HistoryFormat[] = ['openai_chat', 'anthropic_messages', 'openai_responses', 'gemini', 'bedrock_converse'];
const BODY = 'order A-1001 shipped via DHL, parcel in transit, expected delivery Tuesday. '.repeat(13);

function conversation(): ToolEvent[] {
  const events: ToolEvent[] = [];
  const start = Date.now() - 120_000;
  let t = 0;
  const at = () => new Date(start + (t += 20)).toISOString();
  for (let r = 0; r < turns; r += 1) {
    const scope = { tenantId: 'acme', conversationId: 'c1', channel: 'web', runId: `run-${r}`, userMessageId: `u-${r}` };
    for (let round = 0; round < 2; round += 1) {
      for (let s = 0; s < 2; s += 1) {
        const keys = { roundIndex: round, sequenceIndex: s, toolCallId: `call_${r}_${round}_${s}` };
        events.push(toolCall(scope, { ...keys, arguments: { orderId: `A-${r}${round}${s}` }, occurredAt: at() }));
        if (r % 10 === 9 && round === 1 && s === 0) {
          // Paused for a person; the next run resumes with the decision and the result.
          events.push(approvalRequested(scope, { ...keys, occurredAt: at() }));
          const next = { ...scope, runId: `run-${r + 1}` };
          events.push(approvalDecided(next, { ...keys, approved: true, occurredAt: at() }));
          events.push(toolResult(next, { ...keys, result: { summary: BODY }, occurredAt: at() }));
        } else events.push(toolResult(scope, { ...keys, result: { summary: BODY }, occurredAt: at() }));
      }
    }
    events.push(runCompleted(scope, { assistantMessageId: `a-${r}`, occurredAt: at() }));
  }
  return events;
}

const { runs, invocations } = readModelOf(conversation());
const figures: Record<string, number> = {};
for (const format of FORMATS) {
  let best = Number.POSITIVE_INFINITY;
  for (let round = 0; round <= rounds; round += 1) {
    const before = process.cpuUsage();
    for (let i = 0; i < requests; i += 1) {
      replayHistory(
        { tenantId: 'acme', conversationId: 'c1', channel: 'web', asOf: Date.now(), format },
        runs,
        invocations,
        DEFAULT_REPLAY_POLICY,
        o200kTokens,
      );
    }
    const used = process.cpuUsage(before);
    // The first pass warms the JIT.
    if (round > 0) best = Math.min(best, (used.user + used.system) / requests);
  }
  figures[format] = Number(best.toFixed(1));
  console.log(`${format}: ${figures[format]} us CPU per replay of ${turns} turns (${invocations.length} invocations)`);
}
console.log(JSON.stringify({ turns, invocations: invocations.length, cpuMicrosecondsPerReplay: figures }));
