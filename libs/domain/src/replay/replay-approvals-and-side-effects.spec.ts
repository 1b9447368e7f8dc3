/**
 * Golden cases of the loops agents really run (docs/adr/022-approvals-side-effects-and-resumed-runs.md):
 * calls paused for a person's approval and resumed in a later run, calls of
 * side-effect tools cut off before their result, and where a turn goes.
 */

import {
  approvalDecided,
  approvalRequested,
  runCompleted,
  runFailed,
  toolCall,
  toolResult,
} from '../../../../test/support/tool-event-factory';
import { deniedCallNotice } from './replay-call-rules';
import { pausedForApproval, R1, REFUND, REFUND_KEYS, resumed, shape } from './replay-approvals.fixture';
import { iso, replayOf, T0 } from './replay-test-support.fixture';

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
