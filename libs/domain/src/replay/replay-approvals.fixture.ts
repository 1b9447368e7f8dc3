/** The approval and side-effect cases share these runs: a refund paused for a person in run 1, resumed in run 2. */
import type { ToolEvent } from '@toolhistory/contract';
import { approvalDecided, approvalRequested, runCompleted, toolCall, toolResult } from '../../../../test/support/tool-event-factory';
import { inRun, iso, policyOf, replayOf } from './replay-test-support.fixture';

export const R1 = { ...inRun('r1'), userMessageId: 'u1' };
export const R2 = { ...inRun('r2'), userMessageId: 'u2' };
export const REFUND = {
  roundIndex: 0,
  sequenceIndex: 0,
  toolCallId: 'call_refund',
  toolName: 'refund',
  arguments: { orderId: 'A-1', amount: 120 },
};
export const REFUND_KEYS = { roundIndex: 0, sequenceIndex: 0, toolCallId: 'call_refund' };
export const SIDE_EFFECTS = policyOf({ tools: { refund: { sideEffects: true }, charge_card: { sideEffects: true } } });

/** Run 1 asks for the refund and stops for the person's approval. */
export const pausedForApproval = (): ToolEvent[] => [
  toolCall(R1, { ...REFUND, occurredAt: iso(1) }),
  approvalRequested(R1, { ...REFUND_KEYS, reason: 'refunds over 100 EUR', occurredAt: iso(1) }),
  runCompleted(R1, { finishReason: 'tool-calls', occurredAt: iso(2) }),
];

/** Run 2 resumes: the decision and (when approved) the refund's result with the call's keys, then its own round. */
export const resumed = (approved: boolean, answered = approved): ToolEvent[] => [
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

export const shape = (history: ReturnType<typeof replayOf>) => ({
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
