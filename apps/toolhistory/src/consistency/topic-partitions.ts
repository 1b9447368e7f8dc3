/**
 * A topic's partitions, asked of the broker at most once per `refreshMs`
 * (a topic may gain partitions): what a consistency token may name.
 */
export function cachedPartitions(ask: () => Promise<readonly number[]>, refreshMs = 30_000): () => Promise<readonly number[]> {
  let known: { at: number; partitions: readonly number[] } | null = null;
  let asking: Promise<readonly number[]> | null = null;
  return async () => {
    if (known !== null && Date.now() - known.at < refreshMs) return known.partitions;
    asking ??= ask()
      .then((partitions) => {
        known = { at: Date.now(), partitions };
        return partitions;
      })
      .finally(() => (asking = null));
    return asking;
  };
}
