const LINGER_OVER = Symbol('linger over');

/**
 * Groups what an async iterable yields into batches of at most `maxSize`,
 * closing a batch early once `lingerMs` passed since its first item: large
 * batches while catching up, prompt small ones when following live.
 */
export async function* inBatches<T>(source: AsyncIterable<T>, maxSize: number, lingerMs: number): AsyncGenerator<T[]> {
  const iterator = source[Symbol.asyncIterator]();
  try {
    let pending = iterator.next();
    for (;;) {
      const first = await pending;
      if (first.done) return;
      const batch = [first.value];
      pending = iterator.next();
      const deadline = Date.now() + lingerMs;
      while (batch.length < maxSize) {
        let timer: NodeJS.Timeout | undefined;
        const lingered = new Promise<typeof LINGER_OVER>(
          (resolve) => (timer = setTimeout(() => resolve(LINGER_OVER), Math.max(0, deadline - Date.now()))),
        );
        const next = await Promise.race([pending, lingered]);
        clearTimeout(timer);
        if (next === LINGER_OVER) break;
        if (next.done) {
          yield batch;
          return;
        }
        batch.push(next.value);
        pending = iterator.next();
      }
      yield batch;
    }
  } finally {
    await iterator.return?.();
  }
}
