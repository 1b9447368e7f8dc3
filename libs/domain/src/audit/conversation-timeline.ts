import type { RunStatus } from '../projection/read-model.types';
import type { Omission, OmissionReason, ReplayHistory } from '../replay/replay-history';
import { type InvocationRecord, type InvocationStatus, statusOf } from './invocation-listing';

/**
 * A conversation as stored, next to what replay makes of it at one moment:
 * every recorded invocation, grouped by run and round, each with replay's
 * verdict (kept, kept as a notice, or left out and why). The audit console
 * draws this; the rule that pairs the two lives here so it is tested once.
 */
export type ReplayVerdict =
  | { kept: true; expired: boolean; invalidatedBy?: string }
  | { kept: false; reason: OmissionReason; invalidatedBy?: string }
  /** Replay neither kept nor named it: recorded after the moment asked about. */
  | { kept: false; reason: 'not_yet_recorded' };

export interface TimelineCall {
  invocation: InvocationRecord;
  status: InvocationStatus;
  replay: ReplayVerdict;
}

export interface TimelineRound {
  roundIndex: number;
  calls: TimelineCall[];
}

/** `unknown`: replay says nothing of the run (it was recorded after the moment asked about). */
export type TimelineRunStatus = RunStatus | 'unknown';

export interface TimelineRun {
  runId: string;
  status: TimelineRunStatus;
  /** The earliest time of its invocations. */
  startedAt: string;
  rounds: TimelineRound[];
}

export interface ConversationTimeline {
  runs: TimelineRun[];
  /** Calls replay kept, and calls it left out, at that moment. */
  kept: number;
  omitted: number;
}

const placeOf = (runId: string, roundIndex: number, sequenceIndex: number) => `${runId}\u0000${roundIndex}\u0000${sequenceIndex}`;

/** Run status as replay saw it: a replayed turn says it; an omission for a failed or unfinished run implies it. */
function runStatuses(history: ReplayHistory): Map<string, RunStatus> {
  const statuses = new Map<string, RunStatus>(history.turns.map((t) => [t.runId, t.status]));
  for (const o of history.omitted) {
    if (statuses.has(o.runId)) continue;
    if (o.reason === 'run_failed') statuses.set(o.runId, 'failed');
    else if (o.reason === 'run_incomplete') statuses.set(o.runId, 'running');
  }
  return statuses;
}

/**
 * Pairs each invocation with replay's verdict by its place (run, round,
 * sequence). Two rows can share a place (a call and a result that never
 * matched); an omission then goes to the row with its tool call id.
 */
export function conversationTimeline(invocations: readonly InvocationRecord[], history: ReplayHistory): ConversationTimeline {
  const kept = new Map<string, { expired: boolean; invalidatedBy?: string }>();
  for (const turn of history.turns) {
    for (const round of turn.rounds) {
      for (const call of round.calls) {
        kept.set(placeOf(turn.runId, round.roundIndex, call.sequenceIndex), {
          expired: call.expired,
          ...(call.invalidatedBy ? { invalidatedBy: call.invalidatedBy } : {}),
        });
      }
    }
  }
  const omissions = new Map<string, Omission[]>();
  for (const o of history.omitted) {
    const place = placeOf(o.runId, o.roundIndex, o.sequenceIndex);
    omissions.set(place, [...(omissions.get(place) ?? []), o]);
  }
  const statuses = runStatuses(history);

  const verdictOf = (invocation: InvocationRecord): ReplayVerdict => {
    const place = placeOf(invocation.runId, invocation.roundIndex, invocation.sequenceIndex);
    const left = omissions.get(place) ?? [];
    const omission = left.find((o) => o.toolCallId === invocation.toolCallId) ?? left[0];
    if (omission && (!kept.has(place) || omission.toolCallId === invocation.toolCallId)) {
      left.splice(left.indexOf(omission), 1);
      return { kept: false, reason: omission.reason, ...(omission.invalidatedBy ? { invalidatedBy: omission.invalidatedBy } : {}) };
    }
    const replayed = kept.get(place);
    if (replayed) return { kept: true, ...replayed };
    return { kept: false, reason: 'not_yet_recorded' };
  };

  const runs = new Map<string, TimelineRun>();
  const ordered = [...invocations].sort(
    (a, b) =>
      (a.at < b.at ? -1 : a.at > b.at ? 1 : 0) ||
      a.roundIndex - b.roundIndex ||
      a.sequenceIndex - b.sequenceIndex ||
      (a.pairKey < b.pairKey ? -1 : a.pairKey > b.pairKey ? 1 : 0),
  );
  let keptCount = 0;
  for (const invocation of ordered) {
    let run = runs.get(invocation.runId);
    if (!run) {
      run = { runId: invocation.runId, status: statuses.get(invocation.runId) ?? 'unknown', startedAt: invocation.at, rounds: [] };
      runs.set(invocation.runId, run);
    }
    let round = run.rounds.find((r) => r.roundIndex === invocation.roundIndex);
    if (!round) {
      round = { roundIndex: invocation.roundIndex, calls: [] };
      run.rounds.push(round);
    }
    const replay = verdictOf(invocation);
    if (replay.kept) keptCount += 1;
    round.calls.push({ invocation, status: statusOf(invocation), replay });
  }
  for (const run of runs.values()) {
    run.rounds.sort((a, b) => a.roundIndex - b.roundIndex);
    for (const round of run.rounds) round.calls.sort((a, b) => a.invocation.sequenceIndex - b.invocation.sequenceIndex);
  }
  return { runs: [...runs.values()], kept: keptCount, omitted: invocations.length - keptCount };
}
