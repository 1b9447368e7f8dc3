/** 100 ms, doubling, at most 5 s, with jitter so many consumers do not come back at once. */
export function reconnectDelayMs(failures: number): number {
  const ceiling = Math.min(5_000, 100 * 2 ** failures);
  return ceiling / 2 + Math.random() * (ceiling / 2);
}

/** Waits `ms`; false when the signal aborted first. */
export function pause(ms: number, signal: AbortSignal | undefined): Promise<boolean> {
  if (signal?.aborted) return Promise.resolve(false);
  return new Promise((resolve) => {
    const done = (completed: boolean) => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
      resolve(completed);
    };
    const onAbort = () => done(false);
    const timer = setTimeout(() => done(true), ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
