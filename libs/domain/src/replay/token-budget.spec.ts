import type { ToolEvent } from '@toolhistory/contract';
import { runCompleted, toolCall, toolResult } from '../../../../test/support/tool-event-factory';
import { testTokens } from '../projection/test-tokens.fixture';
import { callTokens, resultTokens } from '../projection/invocation-tokens';
import { expiredResultNotice, replayHistory } from './replay-history';
import { parseReplayPolicy } from './parse-replay-policy';
import { DEFAULT_REPLAY_POLICY, historyTokenBudget } from './replay-policy';
import { anthropicProblems, inRun, iso, openAiProblems, policyOf, readModelOf, replayOf, T0 } from './replay-test-support.fixture';

const run = inRun;

/** Rounds of two calls (get_a, get_b), each answered with `result`; the run completes after its last round. */
function runOf(runId: string, start: number, rounds: number, result = 'x'.repeat(40)): ToolEvent[] {
  const events: ToolEvent[] = [];
  let t = start;
  for (let roundIndex = 0; roundIndex < rounds; roundIndex += 1) {
    for (const sequenceIndex of [0, 1]) {
      const toolCallId = `call_${runId}_${roundIndex}_${sequenceIndex}`;
      const toolName = sequenceIndex === 0 ? 'get_a' : 'get_b';
      events.push(
        toolCall(run(runId), { roundIndex, sequenceIndex, toolCallId, toolName, arguments: { n: roundIndex }, occurredAt: iso(t) }),
      );
      events.push(toolResult(run(runId), { roundIndex, sequenceIndex, toolCallId, result, occurredAt: iso(t + 1) }));
    }
    t += 2;
  }
  events.push(runCompleted(run(runId), { assistantMessageId: `msg_${runId}`, finishReason: 'stop', occurredAt: iso(t) }));
  return events;
}

const replay = replayOf;

// Each call: "get_a" (2) + '{"n":0}' (2); each result: 40 characters (10). A round of two: 28 tokens.
const CALL = callTokens(testTokens, 'get_a', { n: 0 }) + resultTokens(testTokens, 'x'.repeat(40));
const ROUND = 2 * CALL;
const rounds = (history: ReturnType<typeof replay>) => history.turns.flatMap((t) => t.rounds.map((r) => `${t.runId}/${r.roundIndex}`));

describe('token budget (maxHistoryTokens, max_history_tokens)', () => {
  // Two runs of two rounds, then one of one: five rounds, oldest first.
  const events = [...runOf('r1', 0, 2), ...runOf('r2', 10, 2), ...runOf('r3', 20, 1)];

  it('counts what is replayed, and replays everything within budget', () => {
    expect(ROUND).toBe(28);
    const all = replay(events);
    expect(all.historyTokens).toBe(5 * ROUND);
    expect(replay(events, { maxHistoryTokens: 5 * ROUND })).toEqual(all);
  });

  it('leaves whole rounds out, oldest first, each call explained once, until the rest fits', () => {
    const history = replay(events, { maxHistoryTokens: 3 * ROUND - 1 });
    expect(rounds(history)).toEqual(['r2/1', 'r3/0']);
    expect(history.historyTokens).toBe(2 * ROUND);
    expect(history.omitted.map((o) => [o.runId, o.roundIndex, o.sequenceIndex, o.reason])).toEqual([
      ['r1', 0, 0, 'token_budget'],
      ['r1', 0, 1, 'token_budget'],
      ['r1', 1, 0, 'token_budget'],
      ['r1', 1, 1, 'token_budget'],
      ['r2', 0, 0, 'token_budget'],
      ['r2', 0, 1, 'token_budget'],
    ]);
    // r1 has nothing left and is not a turn; r2 keeps its last round, with messages for it alone.
    expect(history.turns.map((t) => t.runId)).toEqual(['r2', 'r3']);
    expect(openAiProblems(history.turns[0].messages)).toEqual([]);
    expect(history.turns[0].messages).toHaveLength(3);
    expect(anthropicProblems(replay(events, { maxHistoryTokens: 3 * ROUND - 1, format: 'anthropic_messages' }).turns[0].messages)).toEqual(
      [],
    );
  });

  it('never keeps half a round: one token short of a round leaves the whole round out', () => {
    expect(rounds(replay(events, { maxHistoryTokens: ROUND - 1 }))).toEqual([]);
    expect(rounds(replay(events, { maxHistoryTokens: ROUND }))).toEqual(['r3/0']);
    const none = replay(events, { maxHistoryTokens: 0 });
    expect(none.turns).toEqual([]);
    expect(none.historyTokens).toBe(0);
    expect(none.omitted).toHaveLength(10);
  });

  it("takes the request's budget over the channel's, and the channel's over the default", () => {
    const policy = policyOf({ defaults: { maxHistoryTokens: 4 * ROUND }, channels: { web: { maxHistoryTokens: 2 * ROUND } } });
    expect(historyTokenBudget(policy, 'web')).toBe(2 * ROUND);
    expect(historyTokenBudget(policy, 'email')).toBe(4 * ROUND);
    expect(historyTokenBudget(policy, 'web', 0)).toBe(0);
    expect(historyTokenBudget(DEFAULT_REPLAY_POLICY, 'web')).toBeUndefined();
    expect(rounds(replay(events, {}, policy))).toEqual(['r2/1', 'r3/0']);
    expect(rounds(replay(events, { channel: 'email' }, policy))).toEqual(['r1/1', 'r2/0', 'r2/1', 'r3/0']);
    expect(rounds(replay(events, { maxHistoryTokens: 5 * ROUND }, policy))).toHaveLength(5);
  });

  it('counts a placeholder by its notice, not by the result it replaces', () => {
    const long = [...runOf('r1', 0, 1, 'y'.repeat(4_000))];
    const kept = replay(long, { freshnessWindowSeconds: 1, staleResults: 'placeholder' });
    const notice = expiredResultNotice('get_a', 1);
    expect(kept.turns[0].rounds[0].calls[0].result).toBe(notice);
    expect(kept.historyTokens).toBe(
      callTokens(testTokens, 'get_a', { n: 0 }) +
        callTokens(testTokens, 'get_b', { n: 0 }) +
        testTokens(notice) +
        testTokens(expiredResultNotice('get_b', 1)),
    );
  });

  it('adds the counts stored with the rows, and counts rows stored without them', () => {
    const { runs, invocations } = readModelOf(runOf('r1', 0, 1));
    const request = { tenantId: 'acme', conversationId: 'c1', channel: 'web', asOf: T0 + 60_000, format: 'openai_chat' as const };
    const stored = invocations.map((row) => ({ ...row, callTokens: 100, resultTokens: 1 }));
    expect(replayHistory(request, runs, stored, DEFAULT_REPLAY_POLICY, testTokens).historyTokens).toBe(202);
    const older = invocations.map((row) => ({ ...row, callTokens: null, resultTokens: null }));
    expect(replayHistory(request, runs, older, DEFAULT_REPLAY_POLICY, testTokens).historyTokens).toBe(ROUND);
  });

  it('is read from the policy file, naming a bad value', () => {
    expect(policyOf({ channels: { web: { maxHistoryTokens: 8_000 } } }).channels.web.maxHistoryTokens).toBe(8_000);
    const parsed = parseReplayPolicy({
      defaults: { maxHistoryTokens: -1 },
      channels: { web: { maxHistoryTokens: 1.5 } },
      tools: { t: { maxHistoryTokens: 10 } },
    });
    expect(parsed.ok ? [] : parsed.problems).toEqual([
      'defaults.maxHistoryTokens: must be a whole number of tokens, 0 to 2147483647',
      'channels.web.maxHistoryTokens: must be a whole number of tokens, 0 to 2147483647',
      'tools.t.maxHistoryTokens: unknown key (allowed here: freshnessSeconds, staleResults, persist, invalidates, sideEffects, citations, reasoning, maskArguments, maskResult, detectors, maxResultChars, retention)',
    ]);
  });
});
