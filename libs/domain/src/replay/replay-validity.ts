import { millisOf } from '../projection/row-time';
import type { InvocationRow, RunRow } from '../projection/read-model.types';
import type { ReplayRequest } from './replay-history';
import { resultExpiresAt } from './replay-call-rules';
import { freshnessWindowSeconds, ReplayPolicy } from './replay-policy';

export interface ReplayValidity {
  /** The history computed at asOf is the same for every asOf' with from <= asOf' < until (ms since the epoch). */
  from: number;
  until: number;
}

/**
 * The stretch of time around `request.asOf` over which replayHistory gives
 * the same answer for the same rows: it changes only when as_of crosses an
 * event time (something starts to exist) or a freshness boundary (a result
 * expires). Lets a reader reuse a computed history until then.
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

  for (const run of runs) {
    boundary(millisOf(run.startedAt));
    boundary(millisOf(run.endedAt));
  }
  for (const row of invocations) {
    boundary(millisOf(row.requestedAt));
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
