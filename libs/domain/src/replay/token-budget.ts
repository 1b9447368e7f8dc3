/**
 * The token budget of a replayed history: over it, whole rounds leave,
 * oldest first, until what stays fits. Never half a round: a provider
 * refuses an assistant message whose tool calls are not all answered, and
 * a partial round would show the model a different set of calls than it
 * made. What stays is the longest run of latest rounds within the budget.
 */
interface CostedRound {
  calls: ReadonlyArray<{ tokens: number }>;
  /** The model's text and reasoning replayed with the round. */
  response?: { tokens: number };
}

export interface FittedHistory<R extends CostedRound, Turn extends { rounds: readonly R[] }> {
  turns: Turn[];
  /** The rounds left out, oldest first, each with its turn. */
  dropped: Array<{ turn: Turn; round: R }>;
  /** The tokens of what stays. */
  tokens: number;
}

const roundTokens = (round: CostedRound): number => round.calls.reduce((sum, call) => sum + call.tokens, 0) + (round.response?.tokens ?? 0);

/** `budget` undefined: no limit. Turns left without a round are left out. */
export function fitTokenBudget<R extends CostedRound, Turn extends { rounds: readonly R[] }>(
  turns: readonly Turn[],
  budget: number | undefined,
): FittedHistory<R, Turn> {
  const rounds = turns.flatMap((turn) => turn.rounds.map((round) => ({ turn, round, tokens: roundTokens(round) })));
  let total = rounds.reduce((sum, r) => sum + r.tokens, 0);
  let first = 0;
  if (budget !== undefined) {
    while (first < rounds.length && total > budget) {
      total -= rounds[first].tokens;
      first += 1;
    }
  }
  if (first === 0) return { turns: [...turns], dropped: [], tokens: total };
  const leaving = new Set(rounds.slice(0, first).map((r) => r.round));
  const kept = turns
    .map((turn) => ({ ...turn, rounds: turn.rounds.filter((round) => !leaving.has(round)) }))
    .filter((turn) => turn.rounds.length > 0);
  return { turns: kept, dropped: rounds.slice(0, first).map(({ turn, round }) => ({ turn, round })), tokens: total };
}
