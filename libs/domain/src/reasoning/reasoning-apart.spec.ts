import fc from 'fast-check';
import type { StoredToolEvent } from '@toolhistory/contract';
import { modelResponse, runCompleted, toolCall } from '../../../../test/support/tool-event-factory';
import { policyOf } from '../replay/replay-test-support.fixture';
import { testTokens } from '../projection/test-tokens.fixture';
import { reasoningRulesOf } from './reasoning-rules';
import { type ReasoningStep, setReasoningApart, turnOf } from './reasoning-apart';

const CONVERSATION = { tenantId: 't', conversationId: 'c' };
const U1 = { ...CONVERSATION, runId: 'r1', userMessageId: 'u1' };
const U1_RESUMED = { ...CONVERSATION, runId: 'r2', userMessageId: 'u1' };
const U2 = { ...CONVERSATION, runId: 'r3', userMessageId: 'u2' };
const DEFAULTS = reasoningRulesOf(policyOf({}));

const kinds = (steps: readonly ReasoningStep[]) =>
  steps.map((s) =>
    s.kind === 'keep'
      ? `keep ${s.reasoning.runId}/${s.reasoning.roundIndex} ${s.reasoning.keep}`
      : s.kind === 'tool-rule'
        ? `tool-rule ${s.run.runId}/${s.roundIndex} ${s.keep}`
        : `${s.kind} ${s.turn}`,
  );

describe('turnOf', () => {
  it.each([
    ['a run with a user message: the message', { runId: 'r1', userMessageId: 'u1' }, 'message:u1'],
    ['a run resumed from the same message: the same turn', { runId: 'r2', userMessageId: 'u1' }, 'message:u1'],
    ['a run without one: a turn of its own', { runId: 'r9' }, 'run:r9'],
  ])('%s', (_name, event, turn) => {
    expect(turnOf(event)).toBe(turn);
  });
});

describe('setReasoningApart', () => {
  it('takes the state off a response, with its size, and keeps it by the default rule (until the turn ends)', () => {
    const response = modelResponse(U1, { roundIndex: 0, callSignatures: { call_a: 'sig-a' }, callItemIds: { call_a: 'fc_1' } });
    const { events, steps } = setReasoningApart([response], DEFAULTS, testTokens);
    const state = { reasoning: response.reasoning, callSignatures: { call_a: 'sig-a' }, callItemIds: { call_a: 'fc_1' } };
    const bytes = Buffer.byteLength(JSON.stringify(state));
    const { reasoning: _r, callSignatures: _s, callItemIds: _i, ...rest } = response;
    expect(events).toEqual([{ ...rest, reasoningBytes: bytes }]);
    expect(steps).toEqual([
      { kind: 'other-turns', conversation: CONVERSATION, turn: 'message:u1' },
      {
        kind: 'keep',
        reasoning: {
          ...CONVERSATION,
          runId: 'r1',
          eventId: response.eventId,
          roundIndex: 0,
          turn: 'message:u1',
          keep: 'turn',
          state,
          bytes,
          // Each reasoning item as its JSON text, counted once here.
          tokens: response.reasoning!.reduce((sum, item) => sum + testTokens(JSON.stringify(item)), 0),
        },
      },
    ]);
  });

  it.each<[string, StoredToolEvent[], ReturnType<typeof reasoningRulesOf>, string[]]>([
    [
      'a run that completes with an answer ends its turn',
      [modelResponse(U1, { roundIndex: 0 }), runCompleted(U1, { finishReason: 'stop' })],
      DEFAULTS,
      ['other-turns message:u1', 'keep r1/0 turn', 'end-turn message:u1'],
    ],
    [
      'a run paused for approval (no answer) does not; the run resumed from the same message continues the turn',
      [
        modelResponse(U1, { roundIndex: 0 }),
        runCompleted(U1, { finishReason: 'tool-calls' }),
        modelResponse(U1_RESUMED, { roundIndex: 0 }),
      ],
      DEFAULTS,
      ['other-turns message:u1', 'keep r1/0 turn', 'other-turns message:u1', 'keep r2/0 turn'],
    ],
    [
      "a response of the next user message lets the last turn's state go",
      [modelResponse(U2, { roundIndex: 0 })],
      DEFAULTS,
      ['other-turns message:u2', 'keep r3/0 turn'],
    ],
    [
      'a response without state keeps nothing',
      [modelResponse(U1, { roundIndex: 0, reasoning: undefined })],
      DEFAULTS,
      ['other-turns message:u1'],
    ],
    [
      'a channel that keeps none: nothing kept',
      [modelResponse(U1, { roundIndex: 0 })],
      reasoningRulesOf(policyOf({ channels: { web: { reasoning: { keep: 'never' } } } })),
      ['other-turns message:u1'],
    ],
    [
      'a tool with a rule of its own says so for its round',
      [modelResponse(U1, { roundIndex: 1 }), toolCall(U1, { roundIndex: 1, sequenceIndex: 0, toolName: 'read_records' })],
      reasoningRulesOf(
        policyOf({ defaults: { reasoning: { keep: 'always' } }, tools: { read_records: { reasoning: { keep: 'never' } } } }),
      ),
      ['other-turns message:u1', 'keep r1/1 always', 'tool-rule r1/1 never'],
    ],
  ])('%s', (_name, batch, rules, expected) => {
    expect(kinds(setReasoningApart(batch, rules, testTokens).steps)).toEqual(expected);
  });

  it('never stores a response with its state, and keeps exactly what it took off, whatever the responses carry', () => {
    const item = fc.dictionary(fc.string({ maxLength: 8 }), fc.oneof(fc.string(), fc.integer(), fc.boolean()), { maxKeys: 4 });
    const ids = fc.dictionary(fc.string({ minLength: 1, maxLength: 8 }), fc.string({ maxLength: 40 }), { maxKeys: 3 });
    const response = fc.record(
      { reasoning: fc.array(item, { maxLength: 3 }), callSignatures: ids, callItemIds: ids, roundIndex: fc.nat(5) },
      { requiredKeys: ['roundIndex'] },
    );
    fc.assert(
      fc.property(fc.array(response, { maxLength: 6 }), fc.constantFrom('turn', 'always', 'never'), (responses, keep) => {
        const batch = responses.map((fields) => modelResponse(U1, { reasoning: undefined, ...fields }));
        const { events, steps } = setReasoningApart(batch, reasoningRulesOf(policyOf({ defaults: { reasoning: { keep } } })), testTokens);
        for (const [i, event] of events.entries()) {
          expect(event).not.toHaveProperty('reasoning');
          expect(event).not.toHaveProperty('callSignatures');
          expect(event).not.toHaveProperty('callItemIds');
          const { eventId, type, ...stateOnly } = batch[i] as unknown as Record<string, unknown>;
          const state = Object.fromEntries(
            ['reasoning', 'callSignatures', 'callItemIds'].filter((k) => stateOnly[k] !== undefined).map((k) => [k, stateOnly[k]]),
          );
          const bytes = Object.keys(state).length === 0 ? 0 : Buffer.byteLength(JSON.stringify(state));
          expect((event as { reasoningBytes?: number }).reasoningBytes ?? 0).toBe(bytes);
          const kept = steps.find((s) => s.kind === 'keep' && s.reasoning.eventId === eventId);
          expect([type, kept === undefined ? null : (kept as Extract<ReasoningStep, { kind: 'keep' }>).reasoning.state]).toEqual([
            type,
            bytes > 0 && keep !== 'never' ? state : null,
          ]);
        }
      }),
    );
  });
});
