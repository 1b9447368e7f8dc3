/**
 * Why one recorded call is replayed or left out, one rule per reason. Each
 * rule reads one call's context (replay-call-context.ts) and gives a
 * verdict; replayHistory applies CALL_RULES in order and the first verdict
 * that is not 'kept' stands, so a new reason is a new entry in that list.
 * The token budget is not a call rule: it weighs whole rounds of the
 * history (token-budget.ts).
 */
import { millisOf as at } from '../projection/row-time';
import type { InvocationRow, RunStatus } from '../projection/read-model.types';
import type { ApprovalState } from '../projection/approval-state';
import type { PersistMode } from '../policy/policy-vocabulary';
import type { StaleResultMode, Visibility } from './replay-policy';
import type { PayloadField } from '../encryption/invocation-seals';

/** The reasons a call rule gives; replay-history.ts adds the history-level 'token_budget'. */
export type CallOmissionReason =
  | 'off_branch'
  | 'stale'
  | 'orphan_call'
  | 'orphan_result'
  | 'run_failed'
  | 'run_incomplete'
  | 'trailing_unsent'
  | 'policy_skipped'
  | 'invalidated'
  | 'awaiting_approval'
  | 'awaiting_result';

/** One call as replay sees it at `asOf`, every fact a rule may need already looked up. */
export interface CallContext {
  row: InvocationRow;
  /** The id the call is reported by: recorded or derived, in the requested format. */
  toolCallId: string;
  /** '' while only the result is known. */
  toolName: string;
  /** The call, and its result, recorded by asOf. */
  hasCall: boolean;
  hasResult: boolean;
  /** The run as it stood at asOf: a run that ended later was still running. */
  runStatus: RunStatus;
  /** The run the call is replayed in (its own, or the later run that resolved it) is not on the host's current branch. */
  offBranch: boolean;
  visibility: Visibility;
  /** Requested after its run had ended, so the model never saw it. */
  late: boolean;
  /** In the run's last round, whose results no later service call carried. */
  inUnsentLastRound: boolean;
  /** What today's policy keeps of the tool's payloads (`row.persist` is what was kept when recorded). */
  persistToday: PersistMode;
  staleResults: StaleResultMode;
  freshnessWindowSeconds: number;
  asOf: number;
  /** The later successful mutation that made the result stale (causal-invalidation.ts), as reported. */
  invalidation?: { toolName: string; toolCallId: string };
  approval: ApprovalState;
  /** The tool's policy says its calls change the world (`sideEffects`). */
  sideEffects: boolean;
  /**
   * The run the call's fate depends on (its own; for an approved call, the
   * run that recorded the decision) had ended by asOf, or had gone silent
   * for longer than abandonedAfterSeconds: no result will come from it.
   */
  settled: boolean;
  /** Payloads of the call whose retention had ended (docs/adr/033): nothing of them is kept. */
  expiredPayloads?: ReadonlySet<PayloadField>;
}

export type CallVerdict =
  | { kind: 'kept' }
  /**
   * Replayed, with the notice in place of the result text; `isError` for a
   * notice that stands for a result the tool never gave (denied,
   * interrupted), `interrupted` for the side-effect notice.
   */
  | { kind: 'notice'; notice: string; expired: boolean; invalidatedBy?: string; isError?: boolean; interrupted?: boolean }
  | { kind: 'omitted'; reason: CallOmissionReason; invalidatedBy?: string };

export type CallRule = (call: CallContext) => CallVerdict;

const KEPT: CallVerdict = Object.freeze({ kind: 'kept' });
const omitted = (reason: CallOmissionReason): CallVerdict => ({ kind: 'omitted', reason });

export function expiredResultNotice(toolName: string, windowSeconds: number): string {
  return `[expired] This ${toolName} result is older than ${windowSeconds} seconds and may be out of date; call the tool again for current data.`;
}

export function invalidatedResultNotice(toolName: string, mutatingToolName: string, mutatingCallId: string): string {
  return `[invalidated] This ${toolName} result was made stale by a later ${mutatingToolName} call (${mutatingCallId}); call the tool again for current data.`;
}

/** Fixed, so every replay gives the same bytes: the model learns that the effect is unknown, not that it failed. */
export const INTERRUPTED_CALL_NOTICE =
  '[interrupted] This call was interrupted before its result was recorded: it may or may not have taken effect. Check before calling it again.';

/** Fixed per tool, so every replay gives the same bytes. */
export function payloadExpiredNotice(toolName: string): string {
  return `[expired] This ${toolName} call's arguments and result passed their retention period and are no longer kept; call the tool again if the data is still needed.`;
}

export function deniedCallNotice(toolName: string, reason: string | null): string {
  const why = reason === null || reason.trim() === '' ? 'No reason was given.' : `Reason: ${reason}`;
  return `[denied] A person did not approve this ${toolName} call, so it did not run. ${why}`;
}

/** A result is expired once it is strictly older than its window; at exactly the window it is still fresh. */
export function isResultExpired(asOf: number, completedAt: number, windowSeconds: number): boolean {
  return asOf - completedAt > windowSeconds * 1000;
}

/** The first millisecond at which isResultExpired holds: where a cached history stops being valid. */
export function resultExpiresAt(completedAt: number, windowSeconds: number): number {
  return completedAt + windowSeconds * 1000 + 1;
}

const expiredAt = (call: CallContext) => isResultExpired(call.asOf, at(call.row.completedAt), call.freshnessWindowSeconds);

/**
 * What the run's visibility and last round do not decide: a call a person
 * decided on (their answer is part of the conversation, whatever became of
 * the run that asked; an approved one then waits for its result), and a
 * side-effect call once its run is over (the world may have changed).
 */
export function beyondItsRun(call: CallContext): boolean {
  if (!call.hasCall) return false;
  if (call.approval === 'denied' || call.approval === 'approved') return true;
  return call.sideEffects && call.settled;
}

/**
 * The host's branch outranks every other reason: the run belongs to an
 * answer the person threw away (regenerated, or a message before it edited),
 * so none of it is part of the conversation the model continues, not even a
 * call waiting for approval.
 */
export function offBranchRule(call: CallContext): CallVerdict {
  return call.offBranch ? omitted('off_branch') : KEPT;
}

/** A call waits for a person: nothing to replay yet (the host finds it in pending_approvals). */
export function awaitingApprovalRule(call: CallContext): CallVerdict {
  return call.hasCall && call.approval === 'pending' ? omitted('awaiting_approval') : KEPT;
}

/** per_run: the model only ever builds on runs that completed, so a failed run shows nothing. */
export function runFailedRule(call: CallContext): CallVerdict {
  return call.visibility === 'per_run' && call.runStatus === 'failed' && !beyondItsRun(call) ? omitted('run_failed') : KEPT;
}

/** per_run: a run still going at asOf has not become part of the conversation yet. */
export function runIncompleteRule(call: CallContext): CallVerdict {
  return call.visibility === 'per_run' && call.runStatus === 'running' && !beyondItsRun(call) ? omitted('run_incomplete') : KEPT;
}

/** A result with no call to answer: providers refuse an answer nobody asked for. */
export function orphanResultRule(call: CallContext): CallVerdict {
  return call.hasCall ? KEPT : omitted('orphan_result');
}

/**
 * A call with no result: providers refuse a call left unanswered. A denied
 * call and a settled side-effect call get a notice below instead; an
 * approved call waits for the result its resumed run will record.
 */
export function orphanCallRule(call: CallContext): CallVerdict {
  if (call.hasResult || call.approval === 'denied' || (call.sideEffects && call.settled)) return KEPT;
  return call.approval === 'approved' ? omitted('awaiting_result') : omitted('orphan_call');
}

/** What the model never saw: a call made after its run ended, or a last round no later service call carried. */
export function trailingUnsentRule(call: CallContext): CallVerdict {
  return (call.late || call.inUnsentLastRound) && !beyondItsRun(call) ? omitted('trailing_unsent') : KEPT;
}

/**
 * A payload past its retention is gone: replay treats it as the policy
 * withholding it (dropped), or, where the tool or channel asks for
 * placeholders, replays the call with a notice in place of the result.
 */
export function payloadExpiredRule(call: CallContext): CallVerdict {
  const expired = call.expiredPayloads;
  if (expired === undefined || !(expired.has('arguments') || (call.hasResult && expired.has('result')))) return KEPT;
  if (call.staleResults === 'drop') return omitted('policy_skipped');
  return { kind: 'notice', notice: payloadExpiredNotice(call.toolName), expired: true };
}

/** A denied call that never ran answers with the denial, so the model does not ask again blindly. */
export function deniedRule(call: CallContext): CallVerdict {
  if (call.approval !== 'denied' || call.hasResult) return KEPT;
  const reason = call.expiredPayloads?.has('approvalDecisionReason') ? null : call.row.approvalDecisionReason;
  return { kind: 'notice', notice: deniedCallNotice(call.toolName, reason), expired: false, isError: true };
}

/** A side-effect call without a result, its run over: the model must know the effect is unknown. The notice never expires. */
export function interruptedRule(call: CallContext): CallVerdict {
  if (call.hasResult || !call.sideEffects || !call.settled) return KEPT;
  return { kind: 'notice', notice: INTERRUPTED_CALL_NOTICE, expired: false, isError: true, interrupted: true };
}

/** What was recorded decides, and so does today's policy: either one withholding the payload skips it. */
export function policySkippedRule(call: CallContext): CallVerdict {
  return call.row.persist !== 'full' || call.persistToday !== 'full' ? omitted('policy_skipped') : KEPT;
}

/** A later mutation outranks the clock: it is why the result is out of date, whatever its age. */
export function invalidatedRule(call: CallContext): CallVerdict {
  const { invalidation } = call;
  if (invalidation === undefined) return KEPT;
  const invalidatedBy = invalidation.toolCallId;
  if (call.staleResults === 'drop') return { kind: 'omitted', reason: 'invalidated', invalidatedBy };
  const notice = invalidatedResultNotice(call.toolName, invalidation.toolName, invalidatedBy);
  return { kind: 'notice', notice, expired: expiredAt(call), invalidatedBy };
}

/** A result older than its freshness window is dropped, or kept with a notice that it expired. */
export function staleRule(call: CallContext): CallVerdict {
  if (!expiredAt(call)) return KEPT;
  if (call.staleResults === 'drop') return omitted('stale');
  return { kind: 'notice', notice: expiredResultNotice(call.toolName, call.freshnessWindowSeconds), expired: true };
}

/** In precedence order: the first verdict that is not 'kept' stands. */
export const CALL_RULES: readonly CallRule[] = Object.freeze([
  offBranchRule,
  awaitingApprovalRule,
  runFailedRule,
  runIncompleteRule,
  orphanResultRule,
  orphanCallRule,
  trailingUnsentRule,
  policySkippedRule,
  payloadExpiredRule,
  deniedRule,
  interruptedRule,
  invalidatedRule,
  staleRule,
]);

export function verdictOf(call: CallContext, rules: readonly CallRule[] = CALL_RULES): CallVerdict {
  for (const rule of rules) {
    const verdict = rule(call);
    if (verdict.kind !== 'kept') return verdict;
  }
  return KEPT;
}
