/**
 * Every call judged once by the call rules (replay-call-rules.ts), and what
 * is read off the verdicts apart from replaying the kept calls: the calls
 * left out with their reasons, and the calls waiting for a person.
 */
import type { InvocationRow } from '../projection/read-model.types';
import type { RunAsOf } from './replay-call-context';
import { type CallContext, type CallVerdict, verdictOf } from './replay-call-rules';
import type { Omission, PendingApproval } from './replay-history';

export interface JudgedCall {
  call: CallContext;
  /** The run the call was made in, as it stood at asOf. */
  run: RunAsOf;
  verdict: CallVerdict;
}

/** A judged call replay keeps: as it is, or with a notice in place of its result. */
export type KeptCall = JudgedCall & { verdict: Exclude<CallVerdict, { kind: 'omitted' }> };

export interface JudgedRuns {
  /** The runs started by asOf, oldest first, by id. */
  runs: ReadonlyMap<string, RunAsOf>;
  /** Every call of those runs, in run order, then as the model made them. */
  calls: JudgedCall[];
}

/** Judges each call of each run, in order; nothing is grouped or dropped here. */
export function judgeCalls(runs: ReadonlyArray<{ run: RunAsOf; calls: readonly CallContext[] }>): JudgedRuns {
  return {
    runs: new Map(runs.map(({ run }) => [run.run.runId, run])),
    calls: runs.flatMap(({ run, calls }) => calls.map((call) => ({ call, run, verdict: verdictOf(call) }))),
  };
}

export function isKept(judged: JudgedCall): judged is KeptCall {
  return judged.verdict.kind !== 'omitted';
}

/** The calls left out, each with its rule's reason (and, for an invalidated result, the call that made it stale). */
export function omissionsOf(judged: JudgedRuns): Omission[] {
  return judged.calls.flatMap(({ call, verdict }) => (verdict.kind === 'omitted' ? [omissionOf(call.row, call, verdict)] : []));
}

function omissionOf(row: InvocationRow, call: CallContext, verdict: Extract<CallVerdict, { kind: 'omitted' }>): Omission {
  return {
    runId: row.runId,
    roundIndex: row.roundIndex,
    sequenceIndex: row.sequenceIndex,
    toolCallId: call.toolCallId,
    toolName: call.toolName,
    reason: verdict.reason,
    ...(verdict.invalidatedBy === undefined ? {} : { invalidatedBy: verdict.invalidatedBy }),
  };
}

/** The calls waiting for a person's decision at asOf, oldest request first: the host asks again. */
export function pendingApprovalsOf(judged: JudgedRuns): PendingApproval[] {
  return judged.calls
    .filter(({ verdict }) => verdict.kind === 'omitted' && verdict.reason === 'awaiting_approval')
    .map(({ call }) => pendingApprovalOf(call))
    .sort((a, b) => Date.parse(a.requestedAt) - Date.parse(b.requestedAt));
}

function pendingApprovalOf(call: CallContext): PendingApproval {
  const { row } = call;
  return {
    toolCallId: call.toolCallId,
    toolName: call.toolName,
    arguments: row.arguments ?? {},
    runId: row.runId,
    roundIndex: row.roundIndex,
    sequenceIndex: row.sequenceIndex,
    requestedAt: row.approvalRequestedAt ?? row.requestedAt!,
    reason: row.approvalRequestReason,
  };
}
