/**
 * What the adapter uses of the client's catch-up subscription to $all: an
 * object-mode Readable that also emits "caughtUp", and can be unsubscribed.
 */
export interface SubscriptionStream {
  on(event: string, listener: (...args: unknown[]) => void): unknown;
  off(event: string, listener: (...args: unknown[]) => void): unknown;
  pause(): unknown;
  resume(): unknown;
  /** Objects pushed by the subscription and not yet emitted as "data". */
  readonly readableLength: number;
  unsubscribe(): Promise<void>;
  destroy(): unknown;
}

export type FeedItem<T> = { kind: 'event'; value: T } | { kind: 'caughtUp' };

export interface FeedOptions {
  /** Ends the feed: the iterator returns, also while it waits. */
  signal?: AbortSignal;
  /** Events held before the subscription is paused (the server then waits too). */
  highWaterMark?: number;
}

/**
 * The subscription as an async iterable of its events and caught-up marks,
 * in the order the server sent them.
 *
 * Why not iterate the Readable directly: the client emits "caughtUp" the
 * moment the server's message is decoded, while events decoded before it
 * may still sit in the Readable's buffer. The mark is therefore queued
 * behind the `readableLength` events still buffered when it was emitted;
 * a reader that stops at the mark has then seen every event before it.
 *
 * The feed ends when the signal aborts, when the consumer stops iterating
 * (break, return, throw), when the stream ends (the iterator returns), or
 * when it fails (the iterator throws, after the events received before the
 * failure). In every case the subscription is unsubscribed, which cancels
 * the gRPC call, and destroyed.
 */
export async function* subscriptionFeed<T>(
  stream: SubscriptionStream,
  options: FeedOptions = {},
): AsyncGenerator<FeedItem<T>, void, undefined> {
  const { signal } = options;
  const highWaterMark = options.highWaterMark ?? 256;
  const lowWaterMark = Math.floor(highWaterMark / 2);
  const queue: FeedItem<T>[] = [];
  /** Per caught-up mark not yet queued: how many buffered events must be queued before it. */
  const marks: number[] = [];
  let failure: { error: unknown } | null = null;
  let ended = false;
  let paused = false;
  let wake: (() => void) | null = null;
  const notify = () => {
    const resume = wake;
    wake = null;
    resume?.();
  };

  const onData = (value: unknown) => {
    // The subscription emits the events it was created for; T names them.
    queue.push({ kind: 'event', value: value as T });
    for (let i = 0; i < marks.length; i += 1) marks[i] -= 1;
    while (marks.length > 0 && marks[0] <= 0) {
      marks.shift();
      queue.push({ kind: 'caughtUp' });
    }
    if (!paused && queue.length >= highWaterMark) {
      paused = true;
      stream.pause();
    }
    notify();
  };
  const onCaughtUp = () => {
    const buffered = stream.readableLength;
    if (buffered === 0) queue.push({ kind: 'caughtUp' });
    else marks.push(buffered);
    notify();
  };
  const onError = (error: unknown) => {
    failure ??= { error };
    notify();
  };
  const onEnd = () => {
    ended = true;
    notify();
  };
  const listeners: [string, (arg?: unknown) => void][] = [
    ['data', onData],
    ['caughtUp', onCaughtUp],
    ['error', onError],
    ['end', onEnd],
    ['close', onEnd],
  ];
  for (const [event, listener] of listeners) stream.on(event, listener);
  signal?.addEventListener('abort', notify);

  try {
    for (;;) {
      if (signal?.aborted) return;
      const item = queue.shift();
      if (item) {
        if (paused && queue.length <= lowWaterMark) {
          paused = false;
          stream.resume();
        }
        yield item;
        continue;
      }
      if (failure) throw failure.error;
      if (ended) return;
      await new Promise<void>((resolve) => {
        wake = resolve;
      });
    }
  } finally {
    signal?.removeEventListener('abort', notify);
    for (const [event, listener] of listeners) stream.off(event, listener);
    // The cancellation may still surface as an "error" event; unheard, it would crash the process.
    stream.on('error', ignore);
    await stream.unsubscribe().catch(ignore);
    stream.destroy();
  }
}

function ignore(): void {}
