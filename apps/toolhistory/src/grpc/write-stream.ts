import type { ServerWritableStream } from '@grpc/grpc-js';

/**
 * Writes every item to a server stream, waiting for 'drain' whenever the
 * transport's buffer is full, so a slow consumer slows the reads instead of
 * filling memory. Returns when the items end or the signal aborts.
 */
export async function writeWithBackpressure<T>(
  call: ServerWritableStream<unknown, unknown>,
  items: AsyncIterable<T>,
  toMessage: (item: T) => unknown,
  signal: AbortSignal,
): Promise<void> {
  for await (const item of items) {
    if (signal.aborted) return;
    if (!call.write(toMessage(item))) await drained(call, signal);
  }
}

function drained(call: ServerWritableStream<unknown, unknown>, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      call.off('drain', done);
      signal.removeEventListener('abort', done);
      resolve();
    };
    call.on('drain', done);
    signal.addEventListener('abort', done, { once: true });
  });
}
