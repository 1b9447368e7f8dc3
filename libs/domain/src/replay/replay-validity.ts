import { millisOf } from '../projection/row-time';
import type { InvocationRow, RunRow } from '../projection/read-model.types';
import type { ReplayRequest } from './replay-types';
import { resultExpiresAt } from './replay-call-rules';
import { lastSeenAsOf } from './replay-call-context';
import { abandonedAfterSeconds, freshnessWindowSeconds, ReplayPolicy } from './replay-policy';

export interface ReplayValidity {
  /** The history computed at asOf is the same for every asOf' with from <= asOf' < until (ms since the epoch). */
  from: number;
  until: number;
}

/**
 * The stretch of time around `request.asOf` over which replayHistory gives
 * the same answer for the same rows: it changes only when as_of crosses an
 * event time (something starts to exist), a freshness boundary (a result
 * expires), a payload's end of retention or a running run's abandonment (its side-effect calls get their
 * notice). Lets a reader reuse a computed history until then.
 */
export function replayValidity(
  request: Pick<ReplayRequest, 'asOf' | 'channel' | 'freshnessWindowSeconds'>,
  runs: readonly RunRow[],
  invocations: readonly InvocationRow[],
  policy: ReplayPolicy,
): ReplayValidity {
  let from = Number.NEGATIVE_INFINITY;
  let until = Number.POSITIVE_INFINITY;
  const boundary = (t: number) => {
    if (Number.isNaN(t)) return;
    if (t <= request.asOf) from = Math.max(from, t);
    else until = Math.min(until, t);
  };

  const abandonedAfterMs = abandonedAfterSeconds(policy, request.channel) * 1000;
  const rowsByRun = new Map<string, InvocationRow[]>();
  for (const row of invocations) {
    const rows = rowsByRun.get(row.runId);
    if (rows === undefined) rowsByRun.set(row.runId, [row]);
    else rows.push(row);
  }
  for (const run of runs) {
    boundary(millisOf(run.startedAt));
    boundary(millisOf(run.endedAt));
    // Between event times the run's silence only grows: it counts as abandoned from this moment on (runAsOf).
    boundary(lastSeenAsOf(run, rowsByRun.get(run.runId) ?? [], request.asOf) + abandonedAfterMs + 1);
  }
  for (const row of invocations) {
    boundary(millisOf(row.requestedAt));
    boundary(millisOf(row.approvalRequestedAt));
    boundary(millisOf(row.approvalDecidedAt));
    // A payload's retention ends: from then on replay leaves it out (payloadExpiredRule).
    for (const seal of Object.values(row.payloadSeals ?? {})) if (seal?.expiresAt) boundary(Date.parse(seal.expiresAt));
    const completed = millisOf(row.completedAt);
    boundary(completed);
    if (!Number.isNaN(completed)) {
      const windowSeconds = freshnessWindowSeconds(policy, request.channel, row.toolName ?? '', request.freshnessWindowSeconds);
      // From then on the stale rule (replay-call-rules.ts) drops the result or replaces it by a notice.
      boundary(resultExpiresAt(completed, windowSeconds));
    }
  }
  return { from, until };
}
