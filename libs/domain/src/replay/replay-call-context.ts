/**
 * The facts replay's call rules read, computed once: each run as it stood
 * at asOf, then each of its calls (replay-call-rules.ts).
 */
import { millisOf as at } from '../projection/row-time';
import type { InvocationRow, RunRow, RunStatus } from '../projection/read-model.types';
import { findInvalidations } from './causal-invalidation';
import type { CallContext } from './replay-call-rules';
import {
  freshnessWindowSeconds,
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
  /** The last round's results reached a later service call only if the model then answered. */
  lastRoundSent: boolean;
}

export function callScopeOf(
  request: Pick<CallScope, 'asOf' | 'channel' | 'freshnessWindowSeconds' | 'staleResults'>,
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
  };
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

export function runAsOf(run: RunRow, seen: readonly SeenRow[], asOf: number): RunAsOf {
  const ended = run.status !== 'running' && run.endedAt !== null && at(run.endedAt) <= asOf;
  const status: RunStatus = ended ? run.status : 'running';
  const endedAt = ended ? at(run.endedAt) : Number.POSITIVE_INFINITY;
  const lastRound = Math.max(-1, ...seen.filter((r) => r.hasCall && !isLateCall(r, endedAt)).map((r) => r.row.roundIndex));
  return { run, status, endedAt, lastRound, lastRoundSent: status === 'completed' && run.finishReason === 'stop' };
}

export function callContextOf(scope: CallScope, run: RunAsOf, { row, hasCall, hasResult }: SeenRow): CallContext {
  const toolName = row.toolName ?? '';
  const mutation = scope.invalidations.get(row);
  return {
    row,
    toolCallId: scope.reportedId(row),
    toolName,
    hasCall,
    hasResult,
    runStatus: run.status,
    visibility: scope.visibility,
    late: isLateCall({ row, hasCall }, run.endedAt),
    inUnsentLastRound: row.roundIndex === run.lastRound && !run.lastRoundSent,
    persistToday: persistMode(scope.policy, toolName),
    staleResults: staleResultMode(scope.policy, scope.channel, toolName, scope.staleResults),
    freshnessWindowSeconds: freshnessWindowSeconds(scope.policy, scope.channel, toolName, scope.freshnessWindowSeconds),
    asOf: scope.asOf,
    ...(mutation === undefined ? {} : { invalidation: { toolName: mutation.toolName ?? '', toolCallId: scope.reportedId(mutation) } }),
  };
}

/** The runs started by asOf, oldest first, each with its facts and its calls' contexts. */
export function runsAsOf(scope: CallScope, runs: readonly RunRow[], invocations: readonly InvocationRow[]) {
  const byRun = new Map<string, InvocationRow[]>();
  for (const row of invocations) {
    const rows = byRun.get(row.runId) ?? [];
    rows.push(row);
    byRun.set(row.runId, rows);
  }
  return runs
    .filter((run) => at(run.startedAt) <= scope.asOf)
    .sort((a, b) => at(a.startedAt) - at(b.startedAt) || (a.runId < b.runId ? -1 : a.runId > b.runId ? 1 : 0))
    .map((run) => {
      const seen = seenRowsOf(byRun.get(run.runId) ?? [], scope.asOf);
      const facts = runAsOf(run, seen, scope.asOf);
      return { run: facts, calls: seen.map((r) => callContextOf(scope, facts, r)) };
    });
}
