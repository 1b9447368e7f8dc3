import fc from 'fast-check';
import type { InvocationRow } from '../projection/read-model.types';
import { testTokens } from '../projection/test-tokens.fixture';
import { replayHistory } from '../replay/replay-history';
import { readModelOf } from '../replay/replay-test-support.fixture';
import { delivered, policies, T0 } from '../replay/replay-trace-arbitraries.fixture';
import { conversationTimeline } from './conversation-timeline';
import type { InvocationRecord } from './invocation-listing';

/** An invocation as the audit listing gives it, from its read-model row. */
function recordOf(row: InvocationRow): InvocationRecord {
  const at = row.requestedAt ?? row.completedAt ?? new Date(T0).toISOString();
  return {
    ...row,
    arguments: row.arguments,
    result: row.result ?? null,
    at,
    durationMs: row.requestedAt && row.completedAt ? Date.parse(row.completedAt) - Date.parse(row.requestedAt) : null,
    traceId: null,
  };
}

const request = fc.integer({ min: 0, max: 400 }).map((seconds) => ({
  tenantId: 'acme',
  conversationId: 'c1',
  channel: 'web',
  asOf: T0 + seconds * 1_000,
  format: 'openai_chat' as const,
}));

function timelineOf(
  events: Parameters<typeof readModelOf>[0],
  batchCuts: number[],
  policy: Parameters<typeof replayHistory>[3],
  req: typeof request extends fc.Arbitrary<infer R> ? R : never,
) {
  const { runs, invocations } = readModelOf(events, batchCuts);
  const history = replayHistory(req, runs, invocations, policy, testTokens);
  return { history, runs, invocations, timeline: conversationTimeline(invocations.map(recordOf), history, runs) };
}

describe('conversationTimeline properties (any delivery of any trace, any policy, any moment)', () => {
  it('shows every recorded invocation once, in its run and round, ordered by sequence', () => {
    fc.assert(
      fc.property(delivered, policies, request, ({ events, batchCuts }, policy, req) => {
        const { invocations, timeline } = timelineOf(events, batchCuts, policy, req);
        const shown = timeline.runs.flatMap((run) =>
          run.rounds.flatMap((round) =>
            round.calls.map((c) => {
              expect([c.invocation.runId, c.invocation.roundIndex]).toEqual([run.runId, round.roundIndex]);
              return `${c.invocation.runId}/${c.invocation.pairKey}`;
            }),
          ),
        );
        expect(shown.sort()).toEqual(invocations.map((i) => `${i.runId}/${i.pairKey}`).sort());
        for (const round of timeline.runs.flatMap((r) => r.rounds)) {
          const sequence = round.calls.map((c) => c.invocation.sequenceIndex);
          expect(sequence).toEqual([...sequence].sort((a, b) => a - b));
        }
      }),
    );
  });

  it('counts each verdict, and says "not yet recorded" exactly of the invocations replay could not see at that moment', () => {
    fc.assert(
      fc.property(delivered, policies, request, ({ events, batchCuts }, policy, req) => {
        const { runs, invocations, timeline } = timelineOf(events, batchCuts, policy, req);
        const calls = timeline.runs.flatMap((r) => r.rounds.flatMap((round) => round.calls));
        const rowOf = (i: InvocationRecord) => invocations.find((r) => r.runId === i.runId && r.pairKey === i.pairKey)!;
        const count = (f: (c: (typeof calls)[number]) => boolean) => calls.filter(f).length;
        const notYet = (c: (typeof calls)[number]) => !c.replay.kept && c.replay.reason === 'not_yet_recorded';
        expect([timeline.kept, timeline.omitted, timeline.notYetRecorded]).toEqual([
          count((c) => c.replay.kept),
          count((c) => !c.replay.kept && !notYet(c)),
          count(notYet),
        ]);
        const seen = (iso: string | null, recorded: boolean) => recorded && iso !== null && Date.parse(iso) <= req.asOf;
        for (const c of calls) {
          const i = rowOf(c.invocation);
          const run = runs.find((r) => r.runId === i.runId);
          const visible =
            run !== undefined &&
            Date.parse(run.startedAt) <= req.asOf &&
            (seen(i.requestedAt, i.callEventId !== null) || seen(i.completedAt, i.resultEventId !== null));
          expect([i.pairKey, notYet(c)]).toEqual([i.pairKey, !visible]);
        }
      }),
    );
  });

  it('shows every stored run, in the order they started, also one without a tool call', () => {
    fc.assert(
      fc.property(delivered, policies, request, ({ events, batchCuts }, policy, req) => {
        const { runs, timeline } = timelineOf(events, batchCuts, policy, req);
        expect(timeline.runs.map((r) => r.runId).sort()).toEqual([...new Set(runs.map((r) => r.runId))].sort());
        const starts = timeline.runs.map((r) => Date.parse(r.startedAt));
        expect(starts).toEqual([...starts].sort((a, b) => a - b));
      }),
    );
  });

  it("marks kept exactly the calls replay sends, and gives each of replay's omissions, with its reason, to one invocation", () => {
    fc.assert(
      fc.property(delivered, policies, request, ({ events, batchCuts }, policy, req) => {
        const { history, timeline } = timelineOf(events, batchCuts, policy, req);
        const calls = timeline.runs.flatMap((r) => r.rounds.flatMap((round) => round.calls));
        const replayed = history.turns.flatMap((t) =>
          t.rounds.flatMap((r) => r.calls.map((c) => `${r.resumedFromRunId ?? t.runId}/${r.roundIndex}/${c.sequenceIndex}/${c.expired}`)),
        );
        const keptCalls = calls.filter((c) => c.replay.kept);
        expect(
          keptCalls
            .map(
              (c) => `${c.invocation.runId}/${c.invocation.roundIndex}/${c.invocation.sequenceIndex}/${c.replay.kept && c.replay.expired}`,
            )
            .sort(),
        ).toEqual(replayed.sort());
        const leftOut = calls.flatMap((c) =>
          !c.replay.kept && c.replay.reason !== 'not_yet_recorded'
            ? [`${c.invocation.runId}/${c.invocation.roundIndex}/${c.invocation.sequenceIndex}/${c.replay.reason}`]
            : [],
        );
        expect(leftOut.sort()).toEqual(history.omitted.map((o) => `${o.runId}/${o.roundIndex}/${o.sequenceIndex}/${o.reason}`).sort());
      }),
    );
  });

  it("shows each run's stored status, end and error, whatever replay makes of its calls", () => {
    fc.assert(
      fc.property(delivered, policies, request, ({ events, batchCuts }, policy, req) => {
        const { runs, timeline } = timelineOf(events, batchCuts, policy, req);
        for (const run of timeline.runs) {
          const stored = runs.find((r) => r.runId === run.runId);
          expect([run.status, run.endedAt, run.error !== null]).toEqual(
            stored ? [stored.status, stored.endedAt, stored.status === 'failed'] : ['unknown', null, false],
          );
        }
      }),
    );
  });
});
