/**
 * Where each kept call is replayed: in a turn (a run), in a round. A call
 * goes to its own run's turn unless a placement rule sends it to another;
 * a turn holds the rounds other runs' calls were sent to first (in the
 * order of those runs, then of their rounds), then its own rounds.
 */
import { laterRunOf, type RunAsOf } from './replay-call-context';
import type { KeptCall } from './judged-calls';
import type { ReplayedCall, ReplayedRound, ReplayedTurn } from './replay-history';

/** A turn before its provider messages are made. */
export type TurnDraft = Omit<ReplayedTurn, 'messages'>;

/** The run a kept call is replayed in, when not its own; undefined: this rule does not place it. */
export type PlacementRule = (kept: KeptCall, runs: ReadonlyMap<string, RunAsOf>) => RunAsOf | undefined;

/**
 * Resumed runs: a call a person's decision resolved in a later run (the run
 * that resumed recorded the result, or the denial) is replayed there, where
 * the model went on from the person's answer.
 */
export const resumedInLaterRun: PlacementRule = ({ call }, runs) => {
  const later = laterRunOf(call.row, call.hasResult, call.approval);
  return later === null ? undefined : runs.get(later);
};

/** The first rule that places a call wins; none: its own run. */
export const PLACEMENT_RULES: readonly PlacementRule[] = Object.freeze([resumedInLaterRun]);

/** Rounds by the run their calls were made in, then by round index: insertion order is replay order. */
type RoundsByOrigin = Map<string, Map<number, ReplayedCall[]>>;

interface TurnRounds {
  /** Rounds of earlier runs placed in this turn. */
  resumed: RoundsByOrigin;
  own: Map<number, ReplayedCall[]>;
}

/**
 * The turns of the replay, one per run with something placed in it, in the
 * runs' order: each kept call (given with its replayed form, in run order,
 * then as the model made them) in the round it was made in.
 */
export function turnsOf(
  placed: ReadonlyArray<{ kept: KeptCall; replayed: ReplayedCall }>,
  runs: ReadonlyMap<string, RunAsOf>,
  rules: readonly PlacementRule[] = PLACEMENT_RULES,
): TurnDraft[] {
  const byTurn = new Map<string, TurnRounds>();
  for (const { kept, replayed } of placed) {
    const own = kept.run.run.runId;
    const turn = rules.reduce<RunAsOf | undefined>((found, rule) => found ?? rule(kept, runs), undefined)?.run.runId ?? own;
    const rounds = byTurn.get(turn) ?? { resumed: new Map(), own: new Map() };
    byTurn.set(turn, rounds);
    const byRound = turn === own ? rounds.own : getOrSet(rounds.resumed, own, () => new Map<number, ReplayedCall[]>());
    getOrSet(byRound, kept.call.row.roundIndex, (): ReplayedCall[] => []).push(replayed);
  }
  return [...runs.values()].flatMap((run) => {
    const rounds = byTurn.get(run.run.runId);
    return rounds === undefined ? [] : [turnDraftOf(run, rounds)];
  });
}

function turnDraftOf(run: RunAsOf, { resumed, own }: TurnRounds): TurnDraft {
  const resumedRounds = [...resumed].flatMap(([origin, byRound]) =>
    [...byRound].map(([roundIndex, calls]): ReplayedRound => ({ roundIndex, calls, resumedFromRunId: origin })),
  );
  const ownRounds = [...own].sort(([a], [b]) => a - b).map(([roundIndex, calls]): ReplayedRound => ({ roundIndex, calls }));
  return {
    runId: run.run.runId,
    assistantMessageId: run.status === 'completed' ? run.run.assistantMessageId : null,
    afterMessageId: run.run.userMessageId,
    status: run.status,
    rounds: [...resumedRounds, ...ownRounds],
  };
}

function getOrSet<K, V>(map: Map<K, V>, key: K, make: () => V): V {
  const found = map.get(key);
  if (found !== undefined) return found;
  const made = make();
  map.set(key, made);
  return made;
}
