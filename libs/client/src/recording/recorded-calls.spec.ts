import fc from 'fast-check';
import { MAX_INDEX, MAX_USAGE_ENTRIES } from '../../../contract/src/tool-event.types';
import type { TokenUsage } from '../tool-event-types';
import { boundedUsage, fittedFailure, fittedReason, tokenCount } from './contract-fit';
import { RecordedCalls } from './recorded-calls';
import { callPositionInMessages, resumedCallPosition } from './resumed-calls';

const asked = (toolCallId: string, toolName = 'tool') => ({ toolCallId, toolName, arguments: {} });

describe('RecordedCalls', () => {
  it('numbers the responses that ask for tools as rounds, each call by its place, and counts no round for a response without calls', () => {
    fc.assert(
      fc.property(fc.array(fc.nat({ max: 4 }), { maxLength: 20 }), fc.nat({ max: 5 }), (sizes, first) => {
        const calls = new RecordedCalls(first);
        const rounds = sizes.map((size, at) => calls.openRound(Array.from({ length: size }, (_, i) => asked(`c${at}.${i}`))));
        const opened = rounds.filter((round) => round !== undefined);
        expect(opened.map((round) => round.roundIndex)).toEqual(opened.map((_, i) => first + i));
        for (const round of opened)
          expect(round.calls.map((call) => [call.roundIndex, call.sequenceIndex])).toEqual(
            round.calls.map((_, i) => [round.roundIndex, i]),
          );
        expect(calls.nextRound).toBe(first + opened.length);
      }),
    );
  });

  it('gives a result the first open call of its id in the latest round that has one, preferring its tool', () => {
    const calls = new RecordedCalls();
    calls.openRound([asked('x', 'a'), asked('x', 'b'), asked('y')]);
    calls.openRound([asked('x', 'a'), asked('x', 'b')]);
    const first = calls.open('x')!;
    expect([first.roundIndex, first.sequenceIndex]).toEqual([1, 0]);
    expect(calls.open('x', 'b')).toMatchObject({ roundIndex: 1, sequenceIndex: 1 });
    calls.answer(first);
    calls.answer(calls.open('x')!);
    expect(calls.open('x')).toMatchObject({ roundIndex: 0, sequenceIndex: 0 });
    expect(calls.latest('x')).toMatchObject({ roundIndex: 1, sequenceIndex: 1 });
    expect(calls.open('z')).toBeUndefined();
  });

  it('places a resumed call from its own id first, then the latest pending approval of its id, then the messages', () => {
    const pendingApprovals = [
      { toolCallId: 'c', roundIndex: 0, sequenceIndex: 1 },
      { toolCallId: 'c', roundIndex: 2, sequenceIndex: 0 },
    ];
    const fromMessages = { roundIndex: 5, sequenceIndex: 5 };
    expect(resumedCallPosition('c', { fromId: { roundIndex: 9, sequenceIndex: 9 }, pendingApprovals, fromMessages })).toEqual({
      position: { roundIndex: 9, sequenceIndex: 9 },
      placedBy: 'approval-id',
    });
    expect(resumedCallPosition('c', { pendingApprovals, fromMessages })).toEqual({
      position: { roundIndex: 2, sequenceIndex: 0 },
      placedBy: 'pending-approvals',
    });
    expect(resumedCallPosition('d', { pendingApprovals, fromMessages })).toEqual({ position: fromMessages, placedBy: 'messages' });
    expect(resumedCallPosition('d', { pendingApprovals })).toBeUndefined();
  });

  it('reads a call’s place in messages: rounds since its run began, its place among its message’s calls', () => {
    type M = { user?: true; calls?: string[] };
    const reader = { callsOf: (m: M) => (m.calls ?? []).map((id) => ({ id, name: `t-${id}` })), startsRun: (m: M) => m.user === true };
    const messages: M[] = [{ calls: ['old'] }, { user: true }, { calls: ['a', 'b'] }, {}, { calls: ['c', 'd', 'e'] }];
    expect(callPositionInMessages(messages, 'd', reader)).toEqual({ roundIndex: 1, sequenceIndex: 1, toolName: 't-d', callsInRound: 3 });
    expect(callPositionInMessages(messages, 'old', reader)).toEqual({
      roundIndex: 0,
      sequenceIndex: 0,
      toolName: 't-old',
      callsInRound: 1,
    });
    expect(callPositionInMessages(messages, 'zz', reader)).toBeUndefined();
  });
});

describe('fitting the contract', () => {
  const usage = fc.record({
    inputTokens: fc.nat({ max: 1_000_000 }),
    outputTokens: fc.nat({ max: 1_000_000 }),
    model: fc.constantFrom('m1', 'm2'),
  });

  it('folds the model calls beyond the contract’s count into the last entry, keeping the totals', () => {
    fc.assert(
      fc.property(fc.array(usage, { minLength: 0, maxLength: 1_200 }), (entries) => {
        const bounded = boundedUsage(entries);
        expect(bounded.length).toBe(Math.min(entries.length, MAX_USAGE_ENTRIES));
        const total = (list: readonly TokenUsage[], pick: (u: TokenUsage) => number) => list.reduce((sum, u) => sum + pick(u), 0);
        expect(total(bounded, (u) => u.inputTokens)).toBe(
          Math.min(
            total(entries, (u) => u.inputTokens),
            MAX_INDEX * bounded.length,
          ),
        );
        if (entries.length <= MAX_USAGE_ENTRIES) expect(bounded).toEqual(entries);
      }),
      { numRuns: 30 },
    );
  });

  it.each([
    [12.9, 12],
    [-3, 0],
    [Number.NaN, 0],
    ['7', 0],
    [MAX_INDEX * 2, MAX_INDEX],
  ])('counts tokens %p as %p', (value, count) => expect(tokenCount(value)).toBe(count));

  it('cuts a failure’s code to an id and its message, and an approval reason, to their lengths', () => {
    expect(fittedFailure('c'.repeat(300), 'm'.repeat(5_000))).toEqual({ code: 'c'.repeat(256), message: 'm'.repeat(4_000) });
    expect(fittedReason('r'.repeat(5_000))).toHaveLength(4_000);
  });
});
