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
        expect(timeline.kept + timeline.omitted).toBe(invocations.length);
      }),
    );
  });

  it("marks kept exactly the calls replay sends, and gives each of replay's omissions, with its reason, to one invocation", () => {
    fc.assert(
      fc.property(delivered, policies, request, ({ events, batchCuts }, policy, req) => {
        const { history, timeline } = timelineOf(events, batchCuts, policy, req);
        const calls = timeline.runs.flatMap((r) => r.rounds.flatMap((round) => round.calls));
        const replayed = history.turns.flatMap((t) =>
          t.rounds.flatMap((r) => r.calls.map((c) => `${t.runId}/${r.roundIndex}/${c.sequenceIndex}/${c.expired}`)),
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
