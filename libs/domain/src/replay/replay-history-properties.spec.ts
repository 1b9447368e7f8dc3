import fc from 'fast-check';
import { replayAll, replayRequests as request } from './replay-properties.fixture';

import type { InvocationRow } from '../projection/read-model.types';
import { HistoryFormat, replayHistory } from './replay-history';
import { replayedToolCallId } from './replayed-tool-call-id';

import { anthropicProblems, FORMAT_PROBLEMS, openAiProblems, readModelOf } from './replay-test-support.fixture';
import { testTokens } from '../projection/test-tokens.fixture';
import { delivered, policies } from './replay-trace-arbitraries.fixture';

describe('replayHistory properties (any delivery of any trace)', () => {
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
});
