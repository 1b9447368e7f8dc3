/** What splicing needs of a replayed turn. */
export interface SpliceableTurn<M> {
  /** The host's final assistant message of the run; empty (or absent) when the run has none (failed, or still running). */
  assistantMessageId: string;
  /** The host's message that started the run (the run's userMessageId); empty or absent when the producer gave none. */
  afterMessageId?: string;
  messages: M[];
}

/**
 * The host's current branch as GetReplayHistory's `branchMessageIds` takes
 * it: the ids of its messages in order, each once, messages without one
 * skipped. Splice a history fetched with it, so runs the host's branch no
 * longer holds (a regenerated answer, messages after an edit) stay out.
 */
export function hostBranch<H>(hostMessages: readonly H[], idOf: (message: H) => string | undefined): string[] {
  const ids = new Set<string>();
  for (const message of hostMessages) {
    const id = idOf(message);
    if (id !== undefined && id !== '') ids.add(id);
  }
  return [...ids];
}

/**
 * The host's own messages with each replayed turn's tool segment where the
 * model saw it:
 * - a turn with an assistant message id goes right before the host's
 *   message of that id (the run's final answer); when the host no longer
 *   has that message, the turn is left out: its answer is not in the
 *   conversation either;
 * - a turn without one (a run that failed or is still running) goes right
 *   after the host's message it started from (`afterMessageId`), else, when
 *   it names none or the host no longer has it, after the last host message:
 *   its calls were made, and the model must not make them again unaware.
 *
 * Several turns at the same place keep the turns' order. Host messages keep
 * their order and all appear; ids match a host message's first occurrence.
 */
export function spliceHistory<H, M>(
  hostMessages: readonly H[],
  turns: readonly SpliceableTurn<M>[],
  idOf: (message: H) => string | undefined,
): Array<H | M> {
  const indexOf = new Map<string, number>();
  hostMessages.forEach((message, index) => {
    const id = idOf(message);
    if (id !== undefined && id !== '' && !indexOf.has(id)) indexOf.set(id, index);
  });
  // By gap: gap i is right before host message i; gap hostMessages.length is after the last one.
  const segments = new Map<number, M[]>();
  for (const turn of turns) {
    const gap = gapOf(turn, indexOf, hostMessages.length);
    if (gap === undefined) continue;
    const segment = segments.get(gap) ?? [];
    // A loop, not push(...): a long segment would overflow the stack as arguments.
    for (const message of turn.messages) segment.push(message);
    segments.set(gap, segment);
  }
  const out: Array<H | M> = [];
  const flush = (gap: number) => {
    for (const message of segments.get(gap) ?? []) out.push(message);
  };
  hostMessages.forEach((message, index) => {
    flush(index);
    out.push(message);
  });
  flush(hostMessages.length);
  return out;
}

function gapOf(turn: SpliceableTurn<unknown>, indexOf: ReadonlyMap<string, number>, end: number): number | undefined {
  if (turn.assistantMessageId) return indexOf.get(turn.assistantMessageId);
  const after = turn.afterMessageId ? indexOf.get(turn.afterMessageId) : undefined;
  return after === undefined ? end : after + 1;
}
