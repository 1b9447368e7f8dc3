import fc from 'fast-check';
import { parseOk, replayAll, replayRequests as request } from './replay-properties.fixture';
import type { ToolEvent } from '@toolhistory/contract';

import { replayHistory } from './replay-history';

import { openAiProblems, readModelOf } from './replay-test-support.fixture';
import { testTokens } from '../projection/test-tokens.fixture';
import { delivered, deliveredInOrder, policies } from './replay-trace-arbitraries.fixture';

describe('replayHistory properties (any delivery of any trace)', () => {
  it('keeps within any token budget the longest run of latest rounds that fits, whole rounds only', () => {
    let cut = 0;
    fc.assert(
      fc.property(delivered, policies, request, fc.integer({ min: 0, max: 150 }), ({ events, batchCuts }, policy, req, budget) => {
        const { runs, invocations } = readModelOf(events, batchCuts);
        const unlimited = replayHistory(
          { ...req, format: 'openai_chat', maxHistoryTokens: 2_147_483_647 },
          runs,
          invocations,
          policy,
          testTokens,
        );
        const limited = replayHistory({ ...req, format: 'openai_chat', maxHistoryTokens: budget }, runs, invocations, policy, testTokens);
        const roundsOf = (h: typeof limited) =>
          h.turns.flatMap((t) => t.rounds.map((r) => ({ key: `${r.resumedFromRunId ?? t.runId}/${r.roundIndex}`, round: r })));
        const cost = (r: { round: { calls: Array<{ tokens: number }> } }) => r.round.calls.reduce((sum, c) => sum + c.tokens, 0);
        const all = roundsOf(unlimited);
        const kept = roundsOf(limited);
        // Within budget, and what is reported is what is replayed.
        expect(limited.historyTokens).toBeLessThanOrEqual(budget);
        expect(limited.historyTokens).toBe(kept.reduce((sum, r) => sum + cost(r), 0));
        // A suffix of the rounds replay would give without a budget, each round whole and unchanged.
        expect(kept).toEqual(all.slice(all.length - kept.length));
        // Maximal: the next older round would not have fitted.
        if (kept.length < all.length) {
          cut += 1;
          expect(limited.historyTokens + cost(all[all.length - kept.length - 1])).toBeGreaterThan(budget);
        }
        // Each call left out for the budget is one of the rounds that left.
        const left = limited.omitted.filter((o) => o.reason === 'token_budget').map((o) => `${o.runId}/${o.roundIndex}/${o.sequenceIndex}`);
        const leftRounds = all.slice(0, all.length - kept.length);
        expect(left).toEqual(leftRounds.flatMap((r) => r.round.calls.map((c) => `${r.key}/${c.sequenceIndex}`)));
        for (const turn of limited.turns) expect(openAiProblems(turn.messages)).toEqual([]);
      }),
      { numRuns: 400 },
    );
    // The budgets reach the rule, or the property above would hold vacuously.
    expect(cut).toBeGreaterThan(0);
  });

  it('orders each turn by round and sequence (resumed rounds first), and never replays a run that per_run visibility hides', () => {
    fc.assert(
      fc.property(delivered, request, ({ events, batchCuts }, req) => {
        const { openai } = replayAll(events, batchCuts, parseOk({}), req);
        for (const turn of openai.turns) {
          const resumed = turn.rounds.filter((r) => r.resumedFromRunId !== undefined);
          const own = turn.rounds.filter((r) => r.resumedFromRunId === undefined);
          // Resumed rounds come before the run's own rounds.
          expect(turn.rounds).toEqual([...resumed, ...own]);
          const positions = own.flatMap((r) => r.calls.map((c) => [r.roundIndex, c.sequenceIndex]));
          expect(positions).toEqual([...positions].sort((a, b) => a[0] - b[0] || a[1] - b[1]));
          // Only a person's decision shows calls of a run that did not complete (no tool has side effects here).
          if (turn.status !== 'completed')
            for (const round of own) for (const call of round.calls) expect(['approved', 'denied']).toContain(call.approval);
          for (const round of resumed) for (const call of round.calls) expect(['approved', 'denied']).toContain(call.approval);
        }
      }),
      { numRuns: 200 },
    );
  });

  it('lists as pending exactly the calls whose approval was asked and not decided by as_of (in publishing order)', () => {
    let pendingSeen = 0;
    fc.assert(
      fc.property(deliveredInOrder, policies, request, ({ events, batchCuts }, policy, req) => {
        const { openai } = replayAll(events, batchCuts, policy, req);
        const seen = (e: ToolEvent) => Date.parse(e.occurredAt) <= req.asOf;
        const key = (e: { runId: string; toolCallId: string }) => `${e.runId}/${e.toolCallId}`;
        // Restated from the events: the call and its request seen, no decision for that call id seen (in its run or a later one).
        const expected = new Set<string>();
        for (const request of events) {
          if (request.type !== 'ToolApprovalRequested' || !seen(request)) continue;
          const call = events.find(
            (e) => e.type === 'ToolCallRequested' && e.runId === request.runId && e.toolCallId === request.toolCallId,
          );
          const decided = events.some((d) => d.type === 'ToolApprovalDecided' && seen(d) && d.toolCallId === request.toolCallId);
          if (call !== undefined && seen(call) && !decided) expected.add(key(request));
        }
        const pending = openai.pendingApprovals.map((p) => key(p));
        pendingSeen += pending.length;
        expect(new Set(pending)).toEqual(expected);
        expect(pending.length).toBe(expected.size);
      }),
      { numRuns: 300 },
    );
    expect(pendingSeen).toBeGreaterThan(0);
  });

  it('never replays a call listed as pending, and lists each pending call once among the omissions (any delivery)', () => {
    fc.assert(
      fc.property(delivered, policies, request, ({ events, batchCuts }, policy, req) => {
        const { openai } = replayAll(events, batchCuts, policy, req);
        const replayed = new Set(openai.turns.flatMap((t) => t.rounds.flatMap((r) => r.calls.map((c) => c.toolCallId))));
        for (const p of openai.pendingApprovals) expect(replayed.has(p.toolCallId)).toBe(false);
        const key = (e: { runId: string; toolCallId: string }) => `${e.runId}/${e.toolCallId}`;
        expect(
          openai.omitted
            .filter((o) => o.reason === 'awaiting_approval')
            .map(key)
            .sort(),
        ).toEqual(openai.pendingApprovals.map(key).sort());
      }),
      { numRuns: 300 },
    );
  });

  it('never leaves out a side-effect call of a run that is over, unless a person has not decided on it or a rule about its result applies', () => {
    let noticed = 0;
    fc.assert(
      fc.property(delivered, policies, request, ({ events, batchCuts }, policy, req) => {
        const { openai } = replayAll(events, batchCuts, policy, req);
        if (policy.tools.tool_0?.sideEffects !== true) return;
        const ended = new Set(
          events
            .filter((e) => (e.type === 'RunCompleted' || e.type === 'RunFailed') && Date.parse(e.occurredAt) <= req.asOf)
            .map((e) => e.runId),
        );
        // Side-effect calls (tool_0) left out for reasons that a run being over does not excuse.
        for (const o of openai.omitted.filter((o) => o.toolName === 'tool_0')) {
          expect(o.reason).not.toBe('run_failed');
          if (['orphan_call', 'run_incomplete', 'trailing_unsent', 'awaiting_result'].includes(o.reason)) {
            // Its run, or the run that resumed it, has not ended (runs never go silent within these traces' 400 s).
            const decision = events.find(
              (e) => e.type === 'ToolApprovalDecided' && e.toolCallId === o.toolCallId && Date.parse(e.occurredAt) <= req.asOf,
            );
            expect(ended.has(o.reason === 'awaiting_result' && decision ? decision.runId : o.runId)).toBe(false);
          }
        }
        noticed += openai.turns.flatMap((t) => t.rounds.flatMap((r) => r.calls)).filter((c) => c.interrupted).length;
      }),
      { numRuns: 400 },
    );
    expect(noticed).toBeGreaterThan(0);
  });
});
