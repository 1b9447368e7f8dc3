/**
 * The facts replay's call rules read, computed once: each run as it stood
 * at asOf, then each of its calls (replay-call-rules.ts).
 */
import { millisOf as at } from '../projection/row-time';
import type { InvocationRow, RunRow, RunStatus } from '../projection/read-model.types';
import { findInvalidations } from './causal-invalidation';
import { ApprovalState, approvalAsOf } from '../projection/approval-state';
import type { CallContext } from './replay-call-rules';
import { expiredPayloadFields } from '../encryption/invocation-seals';
import {
  abandonedAfterSeconds,
  freshnessWindowSeconds,
  hasSideEffects,
  invalidationRules,
  persistMode,
  ReplayPolicy,
  StaleResultMode,
  staleResultMode,
  Visibility,
  visibilityOf,
} from './replay-policy';

/** What every call's context shares: the request, the policy, and the conversation-wide lookups. */
export interface CallScope {
  asOf: number;
  channel: string;
  /** Request overrides of the policy. */
  freshnessWindowSeconds?: number;
  staleResults?: StaleResultMode;
  policy: ReplayPolicy;
  visibility: Visibility;
  /** Each invalidated row with the mutation that invalidated it. */
  invalidations: ReadonlyMap<InvocationRow, InvocationRow>;
  /** The id a row is reported by, in the requested format. */
  reportedId: (row: InvocationRow) => string;
  /** Milliseconds of silence after which a running run counts as abandoned. */
  abandonedAfterMs: number;
  /** The host's current path of message ids; undefined: every run counts. */
  branch?: ReadonlySet<string>;
}

/** A row with a call or a result recorded by asOf. */
export interface SeenRow {
  row: InvocationRow;
  hasCall: boolean;
  hasResult: boolean;
}

export interface RunAsOf {
  run: RunRow;
  /** 'running' until its end is recorded by asOf: later events had not happened yet. */
  status: RunStatus;
  /** Milliseconds; +Infinity while the run had not ended by asOf. */
  endedAt: number;
  /** The highest round holding a call the model made (-1 when none). */
  lastRound: number;
  /** The last round's results reached a later service call: the model then answered, or a person's decision resumed it. */
  lastRoundSent: boolean;
  /** Ended by asOf, or silent for longer than abandonedAfterSeconds: no more results will come from it. */
  settled: boolean;
  /**
   * On the host's current branch (always, when the request names none): a
   * completed run by its assistant message, any other by its user message.
   */
  onBranch: boolean;
}

export function callScopeOf(
  request: Pick<CallScope, 'asOf' | 'channel' | 'freshnessWindowSeconds' | 'staleResults'> & { branchMessageIds?: readonly string[] },
  invocations: readonly InvocationRow[],
  policy: ReplayPolicy,
  reportedId: CallScope['reportedId'],
): CallScope {
  return {
    asOf: request.asOf,
    channel: request.channel,
    freshnessWindowSeconds: request.freshnessWindowSeconds,
    staleResults: request.staleResults,
    policy,
    visibility: visibilityOf(policy, request.channel),
    invalidations: findInvalidations(invocations, (toolName) => invalidationRules(policy, toolName), request.asOf),
    reportedId,
    abandonedAfterMs: abandonedAfterSeconds(policy, request.channel) * 1000,
    ...(request.branchMessageIds === undefined || request.branchMessageIds.length === 0
      ? {}
      : { branch: new Set(request.branchMessageIds) }),
  };
}

/** Whether the run, as it stood at asOf, is on the host's branch: its answer when it completed with one, else the message that started it. */
export function isOnBranch(run: RunRow, status: RunStatus, branch: ReadonlySet<string> | undefined): boolean {
  if (branch === undefined) return true;
  const message = status === 'completed' && run.assistantMessageId !== null ? run.assistantMessageId : run.userMessageId;
  return message !== null && branch.has(message);
}

/** The last moment by asOf at which anything of the run was recorded: where its silence starts. */
export function lastSeenAsOf(run: RunRow, rows: readonly InvocationRow[], asOf: number): number {
  const lastEvent = at(run.lastEventAt);
  if (lastEvent <= asOf) return lastEvent;
  let last = at(run.startedAt);
  for (const row of rows)
    for (const time of [row.requestedAt, row.completedAt, row.approvalRequestedAt, row.approvalDecidedAt]) {
      const t = at(time);
      if (t <= asOf && t > last) last = t;
    }
  return last;
}

function byPosition(a: InvocationRow, b: InvocationRow): number {
  return a.roundIndex - b.roundIndex || a.sequenceIndex - b.sequenceIndex || (a.pairKey < b.pairKey ? -1 : a.pairKey > b.pairKey ? 1 : 0);
}

/** A run's rows seen by asOf, in the order the model made the calls. */
export function seenRowsOf(rows: readonly InvocationRow[], asOf: number): SeenRow[] {
  return rows
    .map((row) => ({
      row,
      hasCall: row.callEventId !== null && at(row.requestedAt) <= asOf,
      hasResult: row.resultEventId !== null && at(row.completedAt) <= asOf,
    }))
    .filter((r) => r.hasCall || r.hasResult)
    .sort((a, b) => byPosition(a.row, b.row));
}

/** A call requested after its run ended never reached the model. */
export function isLateCall(seen: Pick<SeenRow, 'row' | 'hasCall'>, endedAt: number): boolean {
  return seen.hasCall && at(seen.row.requestedAt) > endedAt;
}

export function runAsOf(
  run: RunRow,
  seen: readonly SeenRow[],
  asOf: number,
  abandonedAfterMs = Number.POSITIVE_INFINITY,
  branch?: ReadonlySet<string>,
): RunAsOf {
  const ended = run.status !== 'running' && run.endedAt !== null && at(run.endedAt) <= asOf;
  const status: RunStatus = ended ? run.status : 'running';
  const endedAt = ended ? at(run.endedAt) : Number.POSITIVE_INFINITY;
  const lastRound = Math.max(-1, ...seen.filter((r) => r.hasCall && !isLateCall(r, endedAt)).map((r) => r.row.roundIndex));
  // A run that stopped for a person's approval goes on with its last round's results once they decide.
  const decided = seen.some(
    (r) => r.row.roundIndex === lastRound && r.hasCall && ['approved', 'denied'].includes(approvalAsOf(r.row, asOf)),
  );
  // Only a run still going can fall silent; an ended one is settled anyway.
  const silent =
    !ended &&
    asOf -
      lastSeenAsOf(
        run,
        seen.map((r) => r.row),
        asOf,
      ) >
      abandonedAfterMs;
  return {
    run,
    status,
    endedAt,
    lastRound,
    lastRoundSent: (status === 'completed' && run.finishReason === 'stop') || decided,
    settled: ended || silent,
    onBranch: isOnBranch(run, status, branch),
  };
}

/**
 * The later run a call is replayed in, when a person's decision resolved it
 * there (the run that resumed recorded the result, or the denial); null: its own.
 */
export function laterRunOf(row: InvocationRow, hasResult: boolean, approval: ApprovalState): string | null {
  const later = hasResult ? row.resultRunId : approval === 'denied' ? row.decisionRunId : null;
  return later !== null && later !== row.runId ? later : null;
}

/** The run whose end decides whether a call's result can still come: for an approved call, the run that resumed. */
function runAwaitedBy(row: InvocationRow, own: RunAsOf, runs: ReadonlyMap<string, RunAsOf>, approval: ApprovalState): RunAsOf {
  return approval === 'approved' && row.decisionRunId !== null ? (runs.get(row.decisionRunId) ?? own) : own;
}

export function callContextOf(
  scope: CallScope,
  run: RunAsOf,
  { row, hasCall, hasResult }: SeenRow,
  runs: ReadonlyMap<string, RunAsOf> = new Map(),
): CallContext {
  const toolName = row.toolName ?? '';
  const mutation = scope.invalidations.get(row);
  const approval = approvalAsOf(row, scope.asOf);
  const laterRunId = laterRunOf(row, hasResult, approval);
  const replayedIn = (laterRunId === null ? undefined : runs.get(laterRunId)) ?? run;
  return {
    row,
    toolCallId: scope.reportedId(row),
    toolName,
    hasCall,
    hasResult,
    runStatus: run.status,
    offBranch: !replayedIn.onBranch,
    visibility: scope.visibility,
    late: isLateCall({ row, hasCall }, run.endedAt),
    inUnsentLastRound: row.roundIndex === run.lastRound && !run.lastRoundSent,
    persistToday: persistMode(scope.policy, toolName),
    staleResults: staleResultMode(scope.policy, scope.channel, toolName, scope.staleResults),
    freshnessWindowSeconds: freshnessWindowSeconds(scope.policy, scope.channel, toolName, scope.freshnessWindowSeconds),
    asOf: scope.asOf,
    ...(mutation === undefined ? {} : { invalidation: { toolName: mutation.toolName ?? '', toolCallId: scope.reportedId(mutation) } }),
    approval,
    sideEffects: hasSideEffects(scope.policy, toolName),
    settled: runAwaitedBy(row, run, runs, approval).settled,
    ...expiredPayloadsOf(row, scope.asOf),
  };
}

/** The row's payloads gone by asOf (retention); nothing for a row whose payloads never expire. */
function expiredPayloadsOf(row: InvocationRow, asOf: number): Pick<CallContext, 'expiredPayloads'> {
  if (!row.payloadSeals && !row.expiredPayloads?.length) return {};
  const expired = expiredPayloadFields(row, asOf);
  return expired.length === 0 ? {} : { expiredPayloads: new Set(expired) };
}

/** The runs started by asOf, oldest first, each with its facts and its calls' contexts. */
export function runsAsOf(scope: CallScope, runs: readonly RunRow[], invocations: readonly InvocationRow[]) {
  const byRun = new Map<string, InvocationRow[]>();
  for (const row of invocations) {
    const rows = byRun.get(row.runId) ?? [];
    rows.push(row);
    byRun.set(row.runId, rows);
  }
  const started = runs
    .filter((run) => at(run.startedAt) <= scope.asOf)
    .sort((a, b) => at(a.startedAt) - at(b.startedAt) || (a.runId < b.runId ? -1 : a.runId > b.runId ? 1 : 0))
    .map((run) => {
      const seen = seenRowsOf(byRun.get(run.runId) ?? [], scope.asOf);
      return { facts: runAsOf(run, seen, scope.asOf, scope.abandonedAfterMs, scope.branch), seen };
    });
  const factsById = new Map(started.map(({ facts }) => [facts.run.runId, facts]));
  return started.map(({ facts, seen }) => ({ run: facts, calls: seen.map((r) => callContextOf(scope, facts, r, factsById)) }));
}
