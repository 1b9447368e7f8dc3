/**
 * Golden cases of the loops agents really run (docs/adr/022-approvals-side-effects-and-resumed-runs.md):
 * calls paused for a person's approval and resumed in a later run, calls of
 * side-effect tools cut off before their result, and where a turn goes.
 */
import type { ToolEvent } from '@toolhistory/contract';
import {
  approvalDecided,
  approvalRequested,
  runCompleted,
  runFailed,
  toolCall,
  toolResult,
} from '../../../../test/support/tool-event-factory';
import { deniedCallNotice, INTERRUPTED_CALL_NOTICE } from './replay-call-rules';
import { anthropicProblems, inRun, iso, openAiProblems, policyOf, replayOf, T0 } from './replay-test-support.fixture';

const R1 = { ...inRun('r1'), userMessageId: 'u1' };
const R2 = { ...inRun('r2'), userMessageId: 'u2' };
const REFUND = {
  roundIndex: 0,
  sequenceIndex: 0,
  toolCallId: 'call_refund',
  toolName: 'refund',
  arguments: { orderId: 'A-1', amount: 120 },
};
const REFUND_KEYS = { roundIndex: 0, sequenceIndex: 0, toolCallId: 'call_refund' };
const SIDE_EFFECTS = policyOf({ tools: { refund: { sideEffects: true }, charge_card: { sideEffects: true } } });

/** Run 1 asks for the refund and stops for the person's approval. */
const pausedForApproval = (): ToolEvent[] => [
  toolCall(R1, { ...REFUND, occurredAt: iso(1) }),
  approvalRequested(R1, { ...REFUND_KEYS, reason: 'refunds over 100 EUR', occurredAt: iso(1) }),
  runCompleted(R1, { finishReason: 'tool-calls', occurredAt: iso(2) }),
];

/** Run 2 resumes: the decision and (when approved) the refund's result with the call's keys, then its own round. */
const resumed = (approved: boolean, answered = approved): ToolEvent[] => [
  approvalDecided(R2, {
    ...REFUND_KEYS,
    approved,
    reason: approved ? undefined : 'already refunded',
    decidedBy: 'desk-3',
    occurredAt: iso(10),
  }),
  ...(answered ? [toolResult(R2, { ...REFUND_KEYS, result: { refunded: 120 }, occurredAt: iso(11) })] : []),
  toolCall(R2, { roundIndex: 0, sequenceIndex: 0, toolCallId: 'call_mail', toolName: 'send_mail', occurredAt: iso(12) }),
  toolResult(R2, { roundIndex: 0, sequenceIndex: 0, toolCallId: 'call_mail', result: 'sent', occurredAt: iso(13) }),
  runCompleted(R2, { occurredAt: iso(14) }),
];

const shape = (history: ReturnType<typeof replayOf>) => ({
  turns: history.turns.map((t) => ({
    runId: t.runId,
    assistantMessageId: t.assistantMessageId,
    afterMessageId: t.afterMessageId,
    rounds: t.rounds.map((r) => ({
      roundIndex: r.roundIndex,
      ...(r.resumedFromRunId === undefined ? {} : { resumedFromRunId: r.resumedFromRunId }),
      calls: r.calls.map(
        (c) => `${c.toolName}:${c.isError ? 'error:' : ''}${c.interrupted ? 'interrupted:' : ''}${c.approval}:${c.result}`,
      ),
    })),
  })),
  omitted: history.omitted.map((o) => `${o.runId}/${o.toolName}:${o.reason}`),
  pending: history.pendingApprovals.map((p) => `${p.runId}/${p.toolName}/${p.toolCallId}:${p.reason}`),
});

describe('approvals', () => {
  it('awaiting a decision: left out, listed as pending with its arguments and reason', () => {
    const history = replayOf(pausedForApproval(), { asOf: T0 + 5_000 });
    expect(shape(history)).toEqual({
      turns: [],
      omitted: ['r1/refund:awaiting_approval'],
      pending: ['r1/refund/call_refund:refunds over 100 EUR'],
    });
    expect(history.pendingApprovals[0]).toEqual({
      toolCallId: 'call_refund',
      toolName: 'refund',
      arguments: { orderId: 'A-1', amount: 120 },
      runId: 'r1',
      roundIndex: 0,
      sequenceIndex: 0,
      requestedAt: iso(1),
      reason: 'refunds over 100 EUR',
    });
  });

  it('approved and answered in the run that resumed: replayed first in that run, before its own round', () => {
    const history = replayOf([...pausedForApproval(), ...resumed(true)], { asOf: T0 + 20_000 });
    expect(shape(history)).toEqual({
      turns: [
        {
          runId: 'r2',
          assistantMessageId: 'msg_r2',
          afterMessageId: 'u2',
          rounds: [
            { roundIndex: 0, resumedFromRunId: 'r1', calls: ['refund:approved:{"refunded":120}'] },
            { roundIndex: 0, calls: ['send_mail:none:sent'] },
          ],
        },
      ],
      omitted: [],
      pending: [],
    });
  });

  it('between the decision and the result: awaiting its result, no longer pending', () => {
    const history = replayOf([...pausedForApproval(), ...resumed(true)], { asOf: T0 + 10_500 });
    expect(shape(history)).toEqual({ turns: [], omitted: ['r1/refund:awaiting_result'], pending: [] });
  });

  it('denied in the run that resumed: replayed there with an error result that says so and why', () => {
    const history = replayOf([...pausedForApproval(), ...resumed(false)], { asOf: T0 + 20_000 });
    expect(shape(history).turns[0].rounds[0]).toEqual({
      roundIndex: 0,
      resumedFromRunId: 'r1',
      calls: [`refund:error:denied:${deniedCallNotice('refund', 'already refunded')}`],
    });
    expect(history.omitted).toEqual([]);
  });

  it('denied within its own run: replayed in that run, its last round counted as sent', () => {
    const events = [
      toolCall(R1, { ...REFUND, occurredAt: iso(1) }),
      approvalRequested(R1, { ...REFUND_KEYS, occurredAt: iso(1) }),
      approvalDecided(R1, { ...REFUND_KEYS, approved: false, occurredAt: iso(2) }),
      runCompleted(R1, { finishReason: 'stop', occurredAt: iso(3) }),
    ];
    expect(shape(replayOf(events)).turns).toEqual([
      {
        runId: 'r1',
        assistantMessageId: 'msg_r1',
        afterMessageId: 'u1',
        rounds: [{ roundIndex: 0, calls: [`refund:error:denied:${deniedCallNotice('refund', null)}`] }],
      },
    ]);
  });

  it('a parallel call answered beside the paused one reaches the model once the person decides', () => {
    const balance = { roundIndex: 0, sequenceIndex: 1, toolCallId: 'call_balance', toolName: 'get_balance' };
    const events = [
      toolCall(R1, { ...REFUND, occurredAt: iso(1) }),
      toolCall(R1, { ...balance, occurredAt: iso(1) }),
      toolResult(R1, { roundIndex: 0, sequenceIndex: 1, toolCallId: 'call_balance', result: 42, occurredAt: iso(1) }),
      approvalRequested(R1, { ...REFUND_KEYS, occurredAt: iso(1) }),
      runCompleted(R1, { finishReason: 'tool-calls', occurredAt: iso(2) }),
    ];
    expect(shape(replayOf(events, { asOf: T0 + 5_000 })).omitted).toEqual([
      'r1/refund:awaiting_approval',
      'r1/get_balance:trailing_unsent',
    ]);
    const history = replayOf([...events, ...resumed(true)], { asOf: T0 + 20_000 });
    expect(shape(history).turns.map((t) => [t.runId, t.rounds.map((r) => r.calls)])).toEqual([
      ['r1', [['get_balance:none:42']]],
      ['r2', [['refund:approved:{"refunded":120}'], ['send_mail:none:sent']]],
    ]);
  });

  it('a pending approval is pending whatever its run did (failed)', () => {
    const events = [...pausedForApproval().slice(0, 2), runFailed(R1, { occurredAt: iso(2) })];
    expect(shape(replayOf(events, { asOf: T0 + 5_000 })).omitted).toEqual(['r1/refund:awaiting_approval']);
  });

  it('a later run pairs with a call only if the call asked for approval (ids may repeat across runs)', () => {
    const events = [
      toolCall(R1, { ...REFUND, occurredAt: iso(1) }),
      runCompleted(R1, { finishReason: 'tool-calls', occurredAt: iso(2) }),
      ...resumed(true),
    ];
    expect(shape(replayOf(events, { asOf: T0 + 20_000 })).omitted).toEqual(['r1/refund:orphan_call', 'r2/:orphan_result']);
  });
});

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
