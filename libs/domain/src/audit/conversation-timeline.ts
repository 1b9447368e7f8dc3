import type { RunRow, RunStatus } from '../projection/read-model.types';
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

/** A run as stored now: how it ended, whatever replay makes of its calls. */
export type StoredRun = Pick<RunRow, 'runId' | 'status' | 'startedAt' | 'endedAt' | 'finishReason' | 'errorCode' | 'errorMessage'>;

/** `unknown`: no run row holds it (its invocations were recorded, its run row was not). */
export type TimelineRunStatus = RunStatus | 'unknown';

export interface TimelineRun {
  runId: string;
  status: TimelineRunStatus;
  /** The run's start, else the earliest time of its invocations. */
  startedAt: string;
  endedAt: string | null;
  finishReason: string | null;
  error: { code: string | null; message: string | null } | null;
  rounds: TimelineRound[];
}

export interface ConversationTimeline {
  runs: TimelineRun[];
  /** Calls replay kept, and calls it left out, at that moment. */
  kept: number;
  omitted: number;
}

const placeOf = (runId: string, roundIndex: number, sequenceIndex: number) => `${runId}\u0000${roundIndex}\u0000${sequenceIndex}`;

/**
 * Pairs each invocation with replay's verdict by its place (run, round,
 * sequence). Two rows can share a place (a call and a result that never
 * matched); an omission then goes to the row with its tool call id.
 */
export function conversationTimeline(
  invocations: readonly InvocationRecord[],
  history: ReplayHistory,
  storedRuns: readonly StoredRun[] = [],
): ConversationTimeline {
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
  const stored = new Map(storedRuns.map((r) => [r.runId, r]));

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
      const facts = stored.get(invocation.runId);
      run = {
        runId: invocation.runId,
        status: facts?.status ?? 'unknown',
        startedAt: facts?.startedAt ?? invocation.at,
        endedAt: facts?.endedAt ?? null,
        finishReason: facts?.finishReason ?? null,
        error: facts?.status === 'failed' ? { code: facts.errorCode, message: facts.errorMessage } : null,
        rounds: [],
      };
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
