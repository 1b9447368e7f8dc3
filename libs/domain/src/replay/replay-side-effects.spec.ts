/**
 * Golden cases of the loops agents really run (docs/adr/022-approvals-side-effects-and-resumed-runs.md):
 * calls paused for a person's approval and resumed in a later run, calls of
 * side-effect tools cut off before their result, and where a turn goes.
 */

import { approvalDecided, runCompleted, runFailed, toolCall, toolResult } from '../../../../test/support/tool-event-factory';
import { INTERRUPTED_CALL_NOTICE } from './replay-call-rules';
import { pausedForApproval, R1, R2, REFUND_KEYS, resumed, shape, SIDE_EFFECTS } from './replay-approvals.fixture';
import { anthropicProblems, iso, openAiProblems, policyOf, replayOf, T0 } from './replay-test-support.fixture';

describe('side-effect tools (`sideEffects: true`)', () => {
  const charge = { roundIndex: 0, sequenceIndex: 0, toolCallId: 'call_charge', toolName: 'charge_card', arguments: { amount: 30 } };

  it('per_run, the run failed before the result: replayed with the interrupted notice, after the user message', () => {
    const events = [toolCall(R1, { ...charge, occurredAt: iso(1) }), runFailed(R1, { occurredAt: iso(2) })];
    const history = replayOf(events, {}, SIDE_EFFECTS);
    expect(shape(history)).toEqual({
      turns: [
        {
          runId: 'r1',
          assistantMessageId: null,
          afterMessageId: 'u1',
          rounds: [{ roundIndex: 0, calls: [`charge_card:error:interrupted:none:${INTERRUPTED_CALL_NOTICE}`] }],
        },
      ],
      omitted: [],
      pending: [],
    });
    expect(history.turns[0].rounds[0].calls[0].completedAt).toBeNull();
  });

  it('without the rule the same trace drops the call', () => {
    expect(shape(replayOf([toolCall(R1, { ...charge, occurredAt: iso(1) }), runFailed(R1, { occurredAt: iso(2) })]))).toEqual({
      turns: [],
      omitted: ['r1/charge_card:run_failed'],
      pending: [],
    });
  });

  it('a run still going: left out until it ends or goes silent for abandonedAfterSeconds', () => {
    const events = [toolCall(R1, { ...charge, occurredAt: iso(1) })];
    expect(shape(replayOf(events, { asOf: T0 + 601_000 }, SIDE_EFFECTS)).omitted).toEqual(['r1/charge_card:run_incomplete']);
    expect(shape(replayOf(events, { asOf: T0 + 601_001 }, SIDE_EFFECTS)).turns[0].rounds[0].calls).toEqual([
      `charge_card:error:interrupted:none:${INTERRUPTED_CALL_NOTICE}`,
    ]);
    const quicker = policyOf({ defaults: { abandonedAfterSeconds: 5 }, tools: { charge_card: { sideEffects: true } } });
    expect(shape(replayOf(events, { asOf: T0 + 6_001 }, quicker)).turns).toHaveLength(1);
  });

  it('its result in a last round no later service call carried: replayed with the result', () => {
    const events = [
      toolCall(R1, { ...charge, occurredAt: iso(1) }),
      toolResult(R1, { roundIndex: 0, sequenceIndex: 0, toolCallId: 'call_charge', result: 'charged', occurredAt: iso(2) }),
      runCompleted(R1, { finishReason: 'tool_limit', occurredAt: iso(3) }),
    ];
    expect(shape(replayOf(events, {}, SIDE_EFFECTS)).turns[0].rounds[0].calls).toEqual(['charge_card:none:charged']);
  });

  it('freshness still applies to its real result; the notice never expires', () => {
    const answered = [
      toolCall(R1, { ...charge, occurredAt: iso(1) }),
      toolResult(R1, { roundIndex: 0, sequenceIndex: 0, toolCallId: 'call_charge', result: 'charged', occurredAt: iso(2) }),
      runCompleted(R1, { occurredAt: iso(3) }),
    ];
    expect(shape(replayOf(answered, { asOf: T0 + 400_000 }, SIDE_EFFECTS)).omitted).toEqual(['r1/charge_card:stale']);
    const cutOff = [toolCall(R1, { ...charge, occurredAt: iso(1) }), runFailed(R1, { occurredAt: iso(2) })];
    expect(shape(replayOf(cutOff, { asOf: T0 + 10_000_000 }, SIDE_EFFECTS)).turns).toHaveLength(1);
  });

  it('approved and never answered: awaiting its result while the resumed run goes on, the notice once it fails', () => {
    const events = [...pausedForApproval(), approvalDecided(R2, { ...REFUND_KEYS, approved: true, occurredAt: iso(10) })];
    expect(shape(replayOf(events, { asOf: T0 + 20_000 }, SIDE_EFFECTS)).omitted).toEqual(['r1/refund:awaiting_result']);
    const failed = [...events, runFailed(R2, { occurredAt: iso(15) })];
    expect(shape(replayOf(failed, { asOf: T0 + 20_000 }, SIDE_EFFECTS)).turns.map((t) => [t.runId, t.rounds[0].calls])).toEqual([
      ['r1', [`refund:error:interrupted:approved:${INTERRUPTED_CALL_NOTICE}`]],
    ]);
  });
});

describe('every replay stays valid for the providers', () => {
  it.each([
    ['paused', pausedForApproval()],
    ['approved', [...pausedForApproval(), ...resumed(true)]],
    ['denied', [...pausedForApproval(), ...resumed(false)]],
  ])('%s', (_name, events) => {
    for (const format of ['openai_chat', 'anthropic_messages'] as const) {
      const history = replayOf(events, { asOf: T0 + 20_000, format }, SIDE_EFFECTS);
      const messages = history.turns.flatMap((t) => t.messages);
      expect(format === 'openai_chat' ? openAiProblems(messages) : anthropicProblems(messages)).toEqual([]);
    }
  });
});
