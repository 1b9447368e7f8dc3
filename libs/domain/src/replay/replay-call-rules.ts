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
import type { PersistMode } from '../policy/policy-vocabulary';
import type { StaleResultMode, Visibility } from './replay-policy';

/** The reasons a call rule gives; replay-history.ts adds the history-level 'token_budget'. */
export type CallOmissionReason =
  'stale' | 'orphan_call' | 'orphan_result' | 'run_failed' | 'run_incomplete' | 'trailing_unsent' | 'policy_skipped' | 'invalidated';

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
}

export type CallVerdict =
  | { kind: 'kept' }
  /** Replayed, with the notice in place of the result text. */
  | { kind: 'notice'; notice: string; expired: boolean; invalidatedBy?: string }
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

/** A result is expired once it is strictly older than its window; at exactly the window it is still fresh. */
export function isResultExpired(asOf: number, completedAt: number, windowSeconds: number): boolean {
  return asOf - completedAt > windowSeconds * 1000;
}

/** The first millisecond at which isResultExpired holds: where a cached history stops being valid. */
export function resultExpiresAt(completedAt: number, windowSeconds: number): number {
  return completedAt + windowSeconds * 1000 + 1;
}

const expiredAt = (call: CallContext) => isResultExpired(call.asOf, at(call.row.completedAt), call.freshnessWindowSeconds);

/** per_run: the model only ever builds on runs that completed, so a failed run shows nothing. */
export function runFailedRule(call: CallContext): CallVerdict {
  return call.visibility === 'per_run' && call.runStatus === 'failed' ? omitted('run_failed') : KEPT;
}

/** per_run: a run still going at asOf has not become part of the conversation yet. */
export function runIncompleteRule(call: CallContext): CallVerdict {
  return call.visibility === 'per_run' && call.runStatus === 'running' ? omitted('run_incomplete') : KEPT;
}

/** A result with no call to answer: providers refuse an answer nobody asked for. */
export function orphanResultRule(call: CallContext): CallVerdict {
  return call.hasCall ? KEPT : omitted('orphan_result');
}

/** A call with no result: providers refuse a call left unanswered. */
export function orphanCallRule(call: CallContext): CallVerdict {
  return call.hasResult ? KEPT : omitted('orphan_call');
}

/** What the model never saw: a call made after its run ended, or a last round no later service call carried. */
export function trailingUnsentRule(call: CallContext): CallVerdict {
  return call.late || call.inUnsentLastRound ? omitted('trailing_unsent') : KEPT;
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
  runFailedRule,
  runIncompleteRule,
  orphanResultRule,
  orphanCallRule,
  trailingUnsentRule,
  policySkippedRule,
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
