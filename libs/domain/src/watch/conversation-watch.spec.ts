import fc from 'fast-check';
import type { ToolEvent } from '@toolhistory/contract';
import type { InvocationRecord } from '../audit/invocation-listing';
import type { RecordedToolEvent } from '../ports/event-store.port';
import { changesOf, eventsToReport, runOfInvocation, snapshotParts, watchedInvocations } from './conversation-watch';

const record = (fields: Partial<InvocationRecord>): InvocationRecord =>
  ({
    runId: 'r1',
    pairKey: 'id:c1',
    toolCallId: 'c1',
    requestedAt: '2026-01-01T00:00:00.000Z',
    resultRunId: null,
    ...fields,
  }) as InvocationRecord;

const recorded = (streamPosition: number, event: Partial<ToolEvent>): RecordedToolEvent => ({
  globalPosition: String(streamPosition * 10),
  streamPosition,
  recordedAt: '2026-01-01T00:00:00.000Z',
  event: { runId: 'r1', roundIndex: 0, sequenceIndex: 0, toolCallId: 'c1', occurredAt: '2026-01-01T00:00:05.000Z', ...event } as ToolEvent,
});

describe('watching a conversation', () => {
  it.each([
    ['a call in its run', { runId: 'r1', requestedAt: 't' }, 'r1'],
    ['a result alone, answering from another run', { runId: 'r1', requestedAt: null, resultRunId: 'r2' }, 'r2'],
    ['a call answered in another run', { runId: 'r1', requestedAt: 't', resultRunId: 'r2' }, 'r1'],
  ])('shows the status of the run of %s', (_what, fields, run) => {
    expect(runOfInvocation(record(fields as Partial<InvocationRecord>))).toBe(run);
  });

  it('gives each invocation its run status, unknown runs none', () => {
    const runs = [
      { runId: 'r1', status: 'completed' as const, startedAt: 't', endedAt: 't', finishReason: null, errorCode: null, errorMessage: null },
    ];
    expect(watchedInvocations({ invocations: [record({}), record({ runId: 'r9' })], runs }).map((w) => w.runStatus)).toEqual([
      'completed',
      null,
    ]);
  });

  it.each([
    ['a call', { type: 'ToolCallRequested' }, { kind: 'invocation_changed', eventType: 'ToolCallRequested', position: '10' }],
    [
      'a result from a resumed run',
      { type: 'ToolResultReceived', runId: 'r2' },
      { kind: 'invocation_changed', eventType: 'ToolResultReceived' },
    ],
    ['an approval asked', { type: 'ToolApprovalRequested' }, { kind: 'invocation_changed', eventType: 'ToolApprovalRequested' }],
    ['an approval decided', { type: 'ToolApprovalDecided' }, { kind: 'invocation_changed', eventType: 'ToolApprovalDecided' }],
    [
      'a run completed',
      { type: 'RunCompleted' },
      { kind: 'run_ended', runId: 'r1', status: 'completed', endedAt: '2026-01-01T00:00:05.000Z' },
    ],
    ['a run failed', { type: 'RunFailed' }, { kind: 'run_ended', status: 'failed' }],
  ])('turns %s into its change', (_what, event, change) => {
    const invocations = [record({ resultRunId: 'r2' })];
    expect(changesOf([recorded(1, event as Partial<ToolEvent>)], { invocations, runs: [] })).toEqual([expect.objectContaining(change)]);
  });

  it('sends nothing for an event whose invocation is not listed', () => {
    expect(changesOf([recorded(1, { type: 'ToolCallRequested', toolCallId: 'other' })], { invocations: [record({})], runs: [] })).toEqual(
      [],
    );
  });

  it('reports each event once across reads, in stream order, whatever the reads saw', () => {
    // A stream of n events; reads at increasing event counts (the rows' count), each read
    // seeing a stream that may hold events the rows do not include yet.
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 40 }),
        fc.array(fc.integer({ min: 0, max: 40 })),
        fc.integer({ min: 0, max: 40 }),
        (start, reads, extra) => {
          const counts = [...reads].sort((a, b) => a - b).filter((c) => c >= start);
          const total = Math.max(start, ...counts);
          let seen = start;
          const reported: number[] = [];
          for (const count of counts) {
            const stream = Array.from({ length: count + (extra % 3) }, (_, i) => recorded(i + 1, { type: 'RunCompleted' })).reverse();
            const events = eventsToReport(stream, seen, count);
            reported.push(...events.map((e) => e.streamPosition));
            if (events.length > 0) seen = events[events.length - 1].streamPosition;
          }
          expect(reported).toEqual(Array.from({ length: total - start }, (_, i) => start + i + 1));
        },
      ),
    );
  });

  it('splits a snapshot into parts within the budget, in order, one part at least', () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 1, max: 50 })), fc.integer({ min: 1, max: 100 }), (sizes, budget) => {
        const parts = snapshotParts(sizes, budget, (s) => s);
        expect(parts.length).toBeGreaterThanOrEqual(1);
        expect(parts.flat()).toEqual(sizes);
        for (const part of parts) {
          if (part.length > 1) expect(part.reduce((a, b) => a + b, 0)).toBeLessThanOrEqual(budget);
        }
        if (sizes.length === 0) expect(parts).toEqual([[]]);
      }),
    );
  });
});
