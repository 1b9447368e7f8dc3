import fc from 'fast-check';
import type { ToolEvent } from '@toolhistory/contract';
import { runCompleted, toolCall, toolResult } from '../../../../test/support/tool-event-factory';
import type { RecordedToolEvent } from '../ports/event-store.port';
import { planFork } from './plan-fork';

const SOURCE = { tenantId: 't', conversationId: 'src' };
const TARGET = { tenantId: 't', conversationId: 'fork', copyEventId: (id: string) => `copy-of-${id}` };

/** Events as the store holds them, numbered in stream order from global position 100. */
function recorded(events: ToolEvent[]): RecordedToolEvent[] {
  return events.map((event, i) => ({ event, streamPosition: i + 1, globalPosition: String(100 + i), recordedAt: event.occurredAt }));
}

/** Run n: a call, its result, its end; started by message u<n>, answered by a<n>. */
function run(n: number): ToolEvent[] {
  const scope = { ...SOURCE, runId: `r${n}`, userMessageId: `u${n}` };
  return [
    toolCall(scope, { roundIndex: 0, sequenceIndex: 0 }),
    toolResult(scope, { roundIndex: 0, sequenceIndex: 0 }),
    runCompleted(scope, { assistantMessageId: `a${n}` }),
  ];
}

const THREE_RUNS = recorded([...run(1), ...run(2), ...run(3)]);

describe('planFork', () => {
  it.each([
    { name: 'at an assistant message: its run and every run before', message: 'a2', runs: ['r1', 'r2'], upTo: '105' },
    { name: 'at a user message: the run it started too', message: 'u2', runs: ['r1', 'r2'], upTo: '105' },
    { name: 'at the first message', message: 'u1', runs: ['r1'], upTo: '102' },
    { name: 'at the last answer: everything', message: 'a3', runs: ['r1', 'r2', 'r3'], upTo: '108' },
  ])('$name', ({ message, runs, upTo }) => {
    const plan = planFork(SOURCE, THREE_RUNS, message, TARGET);
    if (!plan.found) throw new Error('not found');
    expect([...new Set(plan.copies.map((e) => e.runId))]).toEqual(runs);
    expect(plan.upToPosition).toBe(upTo);
  });

  it('copies each event as the fork own: new id, the fork conversation, the same payload, times and call ids, and its origin', () => {
    const plan = planFork(SOURCE, THREE_RUNS, 'a1', TARGET);
    if (!plan.found) throw new Error('not found');
    const [call] = plan.copies;
    const original = THREE_RUNS[0].event;
    expect(call).toEqual({
      ...original,
      eventId: `copy-of-${original.eventId}`,
      conversationId: 'fork',
      forkedFrom: { conversationId: 'src', position: '100', via: ['src'] },
    });
  });

  it('carries a copy of a copy back to every conversation its payload came through', () => {
    const first = planFork(SOURCE, THREE_RUNS, 'a1', TARGET);
    if (!first.found) throw new Error('not found');
    const second = planFork({ tenantId: 't', conversationId: 'fork' }, recorded(first.copies), 'a1', {
      tenantId: 't',
      conversationId: 'grandchild',
      copyEventId: (id) => `again-${id}`,
    });
    if (!second.found) throw new Error('not found');
    expect(second.copies.map((e) => e.forkedFrom?.via)).toEqual([
      ['fork', 'src'],
      ['fork', 'src'],
      ['fork', 'src'],
    ]);
  });

  it('finds nothing for a message the conversation never had', () => {
    expect(planFork(SOURCE, THREE_RUNS, 'elsewhere', TARGET)).toEqual({ found: false });
    expect(planFork(SOURCE, [], 'a1', TARGET)).toEqual({ found: false });
  });

  it('copies a prefix of the stream, in order, ending with the last event of the message run (any message, any order of runs)', () => {
    const runs = fc.array(fc.integer({ min: 1, max: 6 }), { minLength: 1, maxLength: 12 });
    fc.assert(
      fc.property(runs, fc.nat(), (order, pick) => {
        // Runs may interleave: each element publishes the next event of that run.
        const pending = new Map<number, ToolEvent[]>();
        const stream: ToolEvent[] = [];
        for (const n of order) {
          if (!pending.has(n)) pending.set(n, run(n));
          const next = pending.get(n)!.shift();
          if (next) stream.push(next);
        }
        const events = recorded(stream);
        const messages = [
          ...new Set(stream.flatMap((e) => [e.userMessageId ?? '', e.type === 'RunCompleted' ? e.assistantMessageId : ''])),
        ].filter(Boolean);
        const message = messages[pick % messages.length];
        const plan = planFork(SOURCE, events, message, TARGET);
        if (!plan.found) throw new Error(`no run of ${message}`);
        const n = plan.copies.length;
        expect(plan.copies.map((e) => e.eventId)).toEqual(events.slice(0, n).map((e) => `copy-of-${e.event.eventId}`));
        const runOfMessage = events.find(
          (e) => e.event.userMessageId === message || (e.event.type === 'RunCompleted' && e.event.assistantMessageId === message),
        )!.event.runId;
        expect(events[n - 1].event.runId).toBe(runOfMessage);
        expect(events.slice(n).some((e) => e.event.runId === runOfMessage)).toBe(false);
      }),
      { numRuns: 300 },
    );
  });
});
