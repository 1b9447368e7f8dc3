import fc from 'fast-check';
import type { ToolEvent } from '@toolhistory/contract';
import type { InvocationRow } from '../projection/read-model.types';
import { HistoryFormat, replayHistory, ReplayRequest } from './replay-history';
import { replayedToolCallId } from './replayed-tool-call-id';
import { replayValidity } from './replay-validity';
import { parseReplayPolicy, ReplayPolicy } from './replay-policy';
import { anthropicProblems, FORMAT_PROBLEMS, openAiProblems, readModelOf } from './replay-test-support.fixture';
import { testTokens } from '../projection/test-tokens.fixture';
import { delivered, deliveredInOrder, policies, T0 } from './replay-trace-arbitraries.fixture';

function replayAll(events: ToolEvent[], batchCuts: number[], policy: ReplayPolicy, request: Omit<ReplayRequest, 'format'>) {
  const { runs, invocations } = readModelOf(events, batchCuts);
  return {
    openai: replayHistory({ ...request, format: 'openai_chat' }, runs, invocations, policy, testTokens),
    anthropic: replayHistory({ ...request, format: 'anthropic_messages' }, runs, invocations, policy, testTokens),
    invocations,
  };
}

describe('replayHistory properties (any delivery of any trace)', () => {
  const request = fc.integer({ min: 0, max: 400 }).map((seconds) => ({
    tenantId: 'acme',
    conversationId: 'c1',
    channel: 'web',
    asOf: T0 + seconds * 1_000,
  }));

  it('is always valid for the OpenAI and Anthropic APIs', () => {
    fc.assert(
      fc.property(delivered, policies, request, ({ events, batchCuts }, policy, req) => {
        const { openai, anthropic } = replayAll(events, batchCuts, policy, req);
        for (const turn of openai.turns) expect(openAiProblems(turn.messages)).toEqual([]);
        for (const turn of anthropic.turns) expect(anthropicProblems(turn.messages)).toEqual([]);
      }),
      { numRuns: 400 },
    );
  });

  it('is always valid for every format, with the same calls kept', () => {
    fc.assert(
      fc.property(delivered, policies, request, ({ events, batchCuts }, policy, req) => {
        const { runs, invocations } = readModelOf(events, batchCuts);
        const formats = Object.keys(FORMAT_PROBLEMS) as HistoryFormat[];
        for (const format of formats) {
          const history = replayHistory({ ...req, format }, runs, invocations, policy, testTokens);
          for (const turn of history.turns) expect([format, FORMAT_PROBLEMS[format](turn.messages)]).toEqual([format, []]);
        }
        // Only the shape differs: which calls, in which rounds, with which results, is the same in every format
        // (short of a token budget, which each format's own wrapping of results spends differently).
        const histories = formats.map((format) =>
          replayHistory({ ...req, format, maxHistoryTokens: 2_147_483_647 }, runs, invocations, policy, testTokens),
        );
        const kept = (h: (typeof histories)[number]) =>
          h.turns.map((t) => [t.runId, t.rounds.map((r) => [r.roundIndex, r.calls.map((c) => [c.sequenceIndex, c.result])])]);
        for (const history of histories) expect(kept(history)).toEqual(kept(histories[0]));
      }),
      { numRuns: 300 },
    );
  });

  it('accounts for every recorded call and result: replayed once, or omitted with a reason', () => {
    fc.assert(
      fc.property(delivered, policies, request, ({ events, batchCuts }, policy, req) => {
        const { openai, invocations } = replayAll(events, batchCuts, policy, req);
        const visible = invocations.filter(
          (row) =>
            (row.callEventId !== null && Date.parse(row.requestedAt!) <= req.asOf) ||
            (row.resultEventId !== null && Date.parse(row.completedAt!) <= req.asOf),
        );
        const replayed = openai.turns.flatMap((t) => t.rounds.flatMap((r) => r.calls));
        expect(replayed.length + openai.omitted.length).toBe(visible.length);
        // Nothing replayed lacks its call or its result.
        for (const call of replayed) expect(call.toolName).not.toBe('');
      }),
      { numRuns: 300 },
    );
  });

  it('gives identical bytes on every replay, whatever the batches the read model was built in', () => {
    fc.assert(
      fc.property(delivered, policies, request, fc.array(fc.nat(), { maxLength: 4 }), ({ events, batchCuts }, policy, req, otherCuts) => {
        const first = replayAll(events, batchCuts, policy, req);
        const second = replayAll(events, otherCuts, policy, req);
        expect(JSON.stringify(second.openai)).toBe(JSON.stringify(first.openai));
        expect(JSON.stringify(second.anthropic)).toBe(JSON.stringify(first.anthropic));
      }),
      { numRuns: 200 },
    );
  });

  it('invalidates exactly the results a later successful mutation with equal arguments made stale, naming the first', () => {
    let invalidatedSeen = 0;
    fc.assert(
      fc.property(delivered, policies, request, ({ events, batchCuts }, policy, req) => {
        const { openai, invocations } = replayAll(events, batchCuts, policy, req);
        const recorded = (row: InvocationRow) =>
          row.callEventId !== null &&
          row.resultEventId !== null &&
          Date.parse(row.requestedAt!) <= req.asOf &&
          Date.parse(row.completedAt!) <= req.asOf;
        // The rule restated plainly: who could have invalidated this row, earliest first.
        const witnesses = (row: InvocationRow) =>
          invocations
            .filter(
              (m) =>
                m !== row &&
                recorded(m) &&
                m.isError !== true &&
                (policy.tools[m.toolName ?? '']?.invalidates ?? []).some((rule) => rule.tool === row.toolName) &&
                Date.parse(m.completedAt!) >= Date.parse(row.completedAt!) &&
                (m.arguments as { q: number }).q === (row.arguments as { q: number }).q,
            )
            .sort((a, b) => Date.parse(a.completedAt!) - Date.parse(b.completedAt!));
        // Two rows may share a place (a result that paired with nothing): the replayed id tells them apart.
        const rowAt = (runId: string, roundIndex: number, sequenceIndex: number, toolCallId: string) =>
          invocations.find(
            (r) =>
              r.runId === runId &&
              r.roundIndex === roundIndex &&
              r.sequenceIndex === sequenceIndex &&
              replayedToolCallId(r.toolCallId, r) === toolCallId,
          )!;
        const idOf = (row: InvocationRow) => replayedToolCallId(row.toolCallId, row);

        // Left out or kept as a placeholder for invalidation: the first witness is named.
        const invalidated = [
          ...openai.omitted
            .filter((o) => o.reason === 'invalidated')
            .map((o) => ({ row: rowAt(o.runId, o.roundIndex, o.sequenceIndex, o.toolCallId), by: o.invalidatedBy })),
          ...openai.turns.flatMap((t) =>
            t.rounds.flatMap((r) =>
              r.calls
                .filter((c) => c.invalidatedBy !== undefined)
                .map((c) => ({
                  row: rowAt(r.resumedFromRunId ?? t.runId, r.roundIndex, c.sequenceIndex, c.toolCallId),
                  by: c.invalidatedBy,
                })),
            ),
          ),
        ];
        invalidatedSeen += invalidated.length;
        for (const { row, by } of invalidated) {
          const first = witnesses(row)[0];
          expect(first).toBeDefined();
          expect(
            witnesses(row)
              .filter((w) => w.completedAt === first.completedAt)
              .map(idOf),
          ).toContain(by);
        }
        // Replayed as recorded, or left out as merely stale: no witness.
        const notInvalidated = [
          ...openai.omitted.filter((o) => o.reason === 'stale').map((o) => rowAt(o.runId, o.roundIndex, o.sequenceIndex, o.toolCallId)),
          ...openai.turns.flatMap((t) =>
            t.rounds.flatMap((r) =>
              r.calls
                .filter((c) => c.invalidatedBy === undefined)
                .map((c) => rowAt(r.resumedFromRunId ?? t.runId, r.roundIndex, c.sequenceIndex, c.toolCallId)),
            ),
          ),
        ];
        for (const row of notInvalidated) expect(witnesses(row)).toEqual([]);
      }),
      { numRuns: 400 },
    );
    // The traces reach the rule, or the property above would hold vacuously.
    expect(invalidatedSeen).toBeGreaterThan(0);
  });

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

function parseOk(document: unknown): ReplayPolicy {
  const parsed = parseReplayPolicy(document);
  if (!parsed.ok) throw new Error(parsed.problems.join());
  return parsed.policy;
}

describe('replayValidity', () => {
  it('bounds a stretch of time over which the history does not change', () => {
    fc.assert(
      fc.property(
        delivered,
        policies,
        fc.integer({ min: 0, max: 400_000 }),
        fc.double({ min: 0, max: 1, noNaN: true }),
        ({ events, batchCuts }, policy, offsetMs, where) => {
          const { runs, invocations } = readModelOf(events, batchCuts);
          const request = { tenantId: 'acme', conversationId: 'c1', channel: 'web', asOf: T0 + offsetMs, format: 'openai_chat' as const };
          const validity = replayValidity(request, runs, invocations, policy);
          expect(validity.from).toBeLessThanOrEqual(request.asOf);
          expect(validity.until).toBeGreaterThan(request.asOf);
          const lo = Math.max(validity.from, request.asOf - 1_000_000);
          const hi = Math.min(validity.until - 1, request.asOf + 1_000_000);
          const other = Math.round(lo + (hi - lo) * where);
          expect(replayHistory({ ...request, asOf: other }, runs, invocations, policy, testTokens)).toEqual(
            replayHistory(request, runs, invocations, policy, testTokens),
          );
        },
      ),
      { numRuns: 300 },
    );
  });
});
