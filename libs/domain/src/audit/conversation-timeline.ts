import type { RunRow, RunStatus } from '../projection/read-model.types';
import type { Omission, OmissionReason, ReplayHistory } from '../replay/replay-history';
import { replayedToolCallId } from '../replay/replayed-tool-call-id';
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
  /** Calls replay kept, calls it left out, and calls not yet recorded at that moment. */
  kept: number;
  omitted: number;
  notYetRecorded: number;
}

const keyOf = (runId: string, roundIndex: number, sequenceIndex: number, replayedId: string) =>
  `${runId}\u0000${roundIndex}\u0000${sequenceIndex}\u0000${replayedId}`;

/**
 * Pairs each invocation with replay's verdict by its place (run, round,
 * sequence) and the id replay gives it, so two rows sharing a place (a
 * call and a result that never matched) each get their own. Every stored
 * run is shown, also one that recorded no tool call.
 */
export function conversationTimeline(
  invocations: readonly InvocationRecord[],
  history: ReplayHistory,
  storedRuns: readonly StoredRun[] = [],
): ConversationTimeline {
  // Replay names each call by its place and its replayed id (the recorded id, else one derived from the place).
  const kept = new Map<string, { expired: boolean; invalidatedBy?: string }>();
  for (const turn of history.turns) {
    for (const round of turn.rounds) {
      for (const call of round.calls) {
        // A resumed round is shown where its calls were made.
        kept.set(keyOf(round.resumedFromRunId ?? turn.runId, round.roundIndex, call.sequenceIndex, call.toolCallId), {
          expired: call.expired,
          ...(call.invalidatedBy ? { invalidatedBy: call.invalidatedBy } : {}),
        });
      }
    }
  }
  const omissions = new Map<string, Omission>(history.omitted.map((o) => [keyOf(o.runId, o.roundIndex, o.sequenceIndex, o.toolCallId), o]));
  const stored = new Map(storedRuns.map((r) => [r.runId, r]));

  const verdictOf = (invocation: InvocationRecord): ReplayVerdict => {
    const key = keyOf(
      invocation.runId,
      invocation.roundIndex,
      invocation.sequenceIndex,
      replayedToolCallId(invocation.toolCallId, invocation),
    );
    const omission = omissions.get(key);
    if (omission)
      return { kept: false, reason: omission.reason, ...(omission.invalidatedBy ? { invalidatedBy: omission.invalidatedBy } : {}) };
    const replayed = kept.get(key);
    if (replayed) return { kept: true, ...replayed };
    return { kept: false, reason: 'not_yet_recorded' };
  };

  const runs = new Map<string, TimelineRun>();
  const runOf = (runId: string, firstAt: string): TimelineRun => {
    let run = runs.get(runId);
    if (!run) {
      const facts = stored.get(runId);
      run = {
        runId,
        status: facts?.status ?? 'unknown',
        startedAt: facts?.startedAt ?? firstAt,
        endedAt: facts?.endedAt ?? null,
        finishReason: facts?.finishReason ?? null,
        error: facts?.status === 'failed' ? { code: facts.errorCode, message: facts.errorMessage } : null,
        rounds: [],
      };
      runs.set(runId, run);
    }
    return run;
  };
  for (const facts of storedRuns) runOf(facts.runId, facts.startedAt);
  const ordered = [...invocations].sort(
    (a, b) =>
      (a.at < b.at ? -1 : a.at > b.at ? 1 : 0) ||
      a.roundIndex - b.roundIndex ||
      a.sequenceIndex - b.sequenceIndex ||
      (a.pairKey < b.pairKey ? -1 : a.pairKey > b.pairKey ? 1 : 0),
  );
  const counts = { kept: 0, omitted: 0, notYetRecorded: 0 };
  for (const invocation of ordered) {
    const run = runOf(invocation.runId, invocation.at);
    let round = run.rounds.find((r) => r.roundIndex === invocation.roundIndex);
    if (!round) {
      round = { roundIndex: invocation.roundIndex, calls: [] };
      run.rounds.push(round);
    }
    const replay = verdictOf(invocation);
    if (replay.kept) counts.kept += 1;
    else if (replay.reason === 'not_yet_recorded') counts.notYetRecorded += 1;
    else counts.omitted += 1;
    round.calls.push({ invocation, status: statusOf(invocation), replay });
  }
  for (const run of runs.values()) {
    run.rounds.sort((a, b) => a.roundIndex - b.roundIndex);
    for (const round of run.rounds) round.calls.sort((a, b) => a.invocation.sequenceIndex - b.invocation.sequenceIndex);
  }
  const byStart = (a: TimelineRun, b: TimelineRun) =>
    Date.parse(a.startedAt) - Date.parse(b.startedAt) || (a.runId < b.runId ? -1 : a.runId > b.runId ? 1 : 0);
  return { runs: [...runs.values()].sort(byStart), ...counts };
}
