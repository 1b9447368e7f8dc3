/** What splicing needs of a replayed turn. */
export interface SpliceableTurn<M> {
  assistantMessageId: string;
  messages: M[];
}

/**
 * The host's own messages with each replayed turn's tool segment put right
 * before the host's final assistant message of that run (the message whose
 * id the run completed with), which is where the model saw it. A turn whose
 * message the host no longer has is left out: its answer is not in the
 * conversation either. Host messages keep their order.
 */
export function spliceHistory<H, M>(
  hostMessages: readonly H[],
  turns: readonly SpliceableTurn<M>[],
  idOf: (message: H) => string | undefined,
): Array<H | M> {
  const segments = new Map<string, M[]>();
  for (const turn of turns) {
    if (turn.assistantMessageId !== '')
      segments.set(turn.assistantMessageId, [...(segments.get(turn.assistantMessageId) ?? []), ...turn.messages]);
  }
  return hostMessages.flatMap((message) => {
    const id = idOf(message);
    const segment = id === undefined ? undefined : segments.get(id);
    if (segment === undefined) return [message];
    segments.delete(id!);
    return [...segment, message];
  });
}
