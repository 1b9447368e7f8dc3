import type { DatabaseSettings } from './database';
import { PostgresChannelListener } from './postgres-channel-listener';
import { APPENDED_CHANNEL } from './postgres-event-append';

/**
 * One LISTEN connection per process wakes every caught-up subscriber of a
 * schema when events are appended. Notifications only shorten the wait:
 * subscribers also look again on their own after an idle interval, so a
 * lost connection (reconnected with backoff) delays them but loses nothing.
 */
export class PostgresAppendListener {
  private generation = deferred();
  private readonly listener: PostgresChannelListener;

  constructor(settings: DatabaseSettings, onError: (error: Error) => void = () => undefined) {
    this.listener = new PostgresChannelListener(settings, APPENDED_CHANNEL, {
      notification: (schema) => {
        if (schema === settings.schema) this.wake();
      },
      // Appends may have happened while not listening: wake everyone to look.
      listening: () => this.wake(),
      lost: onError,
    });
  }

  /** Resolves at the next append notification of this schema (shared by all callers). */
  nextAppend(signal?: AbortSignal): Promise<void> {
    if (!signal?.aborted) this.listener.start();
    return this.generation.promise;
  }

  async close(): Promise<void> {
    await this.listener.close();
    this.wake();
  }

  private wake(): void {
    const current = this.generation;
    this.generation = deferred();
    current.resolve();
  }
}

function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}
