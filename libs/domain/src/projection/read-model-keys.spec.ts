import fc from 'fast-check';
import type { ToolEvent } from '@toolhistory/contract';
import {
  approvalDecided,
  approvalRequested,
  runCompleted,
  runFailed,
  toolCall,
  toolResult,
} from '../../../../test/support/tool-event-factory';
import type { EventKeys } from '../ports/event-store.port';
import { invocationKeysTouchedBy, isInvocationEvent, keysTouchedBy, pairKeyOf } from './read-model-keys';

/**
 * What an EventKeyFeed gives of an event: its keys, an invocation's pair
 * key where the store keeps it, else the members it is made of.
 */
function keysOf(event: ToolEvent, pairKeyKept = false): EventKeys {
  const { eventId, type, tenantId, conversationId, runId } = event;
  if (!isInvocationEvent(event)) return { eventId, type, tenantId, conversationId, runId };
  const pair = pairKeyKept
    ? { pairKey: pairKeyOf(event) }
    : { toolCallId: event.toolCallId, roundIndex: event.roundIndex, sequenceIndex: event.sequenceIndex };
  return { eventId, type, tenantId, conversationId, runId, ...pair };
}

const eventArbitrary: fc.Arbitrary<ToolEvent> = fc
  .record({
    kind: fc.constantFrom('call', 'result', 'asked', 'decided', 'completed', 'failed'),
    tenantId: fc.constantFrom('t1', 't2'),
    conversationId: fc.constantFrom('c1', 'c2'),
    runId: fc.constantFrom('r1', 'r2'),
    roundIndex: fc.nat(2),
    sequenceIndex: fc.nat(2),
    toolCallId: fc.constantFrom('', 'call_a', 'call_b'),
  })
  .map(({ kind, tenantId, conversationId, runId, toolCallId, ...at }) => {
    const scope = { tenantId, conversationId, runId };
    const pair = { ...at, toolCallId };
    switch (kind) {
      case 'call':
        return toolCall(scope, pair);
      case 'result':
        return toolResult(scope, pair);
      case 'asked':
        return approvalRequested(scope, pair);
      case 'decided':
        return approvalDecided(scope, { ...pair, approved: true });
      case 'completed':
        return runCompleted(scope);
      default:
        return runFailed(scope);
    }
  });

describe('invocationKeysTouchedBy', () => {
  it('finds from keys alone the invocations keysTouchedBy finds from whole events, and their conversations', () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(eventArbitrary, fc.boolean()), { maxLength: 30 }), (drawn) => {
        const events = drawn.map(([event]) => event);
        const fromEvents = keysTouchedBy(events.filter(isInvocationEvent));
        expect(invocationKeysTouchedBy(drawn.map(([event, pairKeyKept]) => keysOf(event, pairKeyKept)))).toEqual({
          conversations: fromEvents.conversations,
          invocations: fromEvents.invocations,
        });
      }),
    );
  });

  it.each<[string, ToolEvent[], string[]]>([
    ['nothing', [], []],
    ['a run’s end touches no invocation', [runCompleted({ tenantId: 't', conversationId: 'c', runId: 'r' })], []],
    [
      'a call and its result: one invocation, by id',
      [
        toolCall({ tenantId: 't', conversationId: 'c', runId: 'r' }, { roundIndex: 0, sequenceIndex: 0, toolCallId: 'x' }),
        toolResult({ tenantId: 't', conversationId: 'c', runId: 'r' }, { roundIndex: 0, sequenceIndex: 0, toolCallId: 'x' }),
      ],
      ['t c r id:x'],
    ],
    [
      'no id: by round and sequence',
      [toolCall({ tenantId: 't', conversationId: 'c', runId: 'r' }, { roundIndex: 2, sequenceIndex: 1, toolCallId: '' })],
      ['t c r pos:2:1'],
    ],
    [
      'a result recorded in a later run names that run',
      [toolResult({ tenantId: 't', conversationId: 'c', runId: 'r2' }, { roundIndex: 0, sequenceIndex: 0, toolCallId: 'x' })],
      ['t c r2 id:x'],
    ],
  ])('%s', (_, events, expected) => {
    const { invocations } = invocationKeysTouchedBy(events.map((event) => keysOf(event)));
    expect(invocations.map((k) => `${k.tenantId} ${k.conversationId} ${k.runId} ${k.pairKey}`)).toEqual(expected);
  });
});
