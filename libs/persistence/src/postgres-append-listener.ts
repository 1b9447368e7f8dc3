import { Client } from 'pg';
import { connectionUrl, type DatabaseSettings } from './database';
import { APPENDED_CHANNEL } from './postgres-event-append';

/**
 * One LISTEN connection per process wakes every caught-up subscriber of a
 * schema when events are appended. Notifications only shorten the wait:
 * subscribers also look again on their own after an idle interval, so a
 * lost connection (reconnected with backoff) delays them but loses nothing.
 */
export class PostgresAppendListener {
  private client: Client | null = null;
  private connecting: Promise<void> | null = null;
  private generation = deferred();
  private closed = false;
  private retryTimer: NodeJS.Timeout | null = null;

  constructor(
    private readonly settings: DatabaseSettings,
    private readonly onError: (error: Error) => void = () => undefined,
  ) {}

  /** Resolves at the next append notification of this schema (shared by all callers). */
  nextAppend(signal?: AbortSignal): Promise<void> {
    if (!this.closed && !this.client && !this.connecting && !signal?.aborted) this.connect();
    return this.generation.promise;
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.retryTimer) clearTimeout(this.retryTimer);
    await this.connecting?.catch(() => undefined);
    const client = this.client;
    this.client = null;
    await client?.end().catch(() => undefined);
    this.wake();
  }

  private connect(attempt = 0): void {
    const client = new Client({
      connectionString: connectionUrl(this.settings),
      application_name: 'toolhistory-listener',
      connectionTimeoutMillis: 5_000,
    });
    client.on('notification', (message) => {
      if (message.payload === this.settings.schema) this.wake();
    });
    client.on('error', (error) => this.lost(client, error, 0));
    this.connecting = client
      .connect()
      .then(() => client.query(`LISTEN ${APPENDED_CHANNEL}`))
      .then(() => {
        if (this.closed) return void client.end().catch(() => undefined);
        this.client = client;
        // Appends may have happened while not listening: wake everyone to look.
        this.wake();
      })
      .catch((error: Error) => this.lost(client, error, attempt + 1))
      .finally(() => (this.connecting = null));
  }

  private lost(client: Client, error: Error, attempt: number): void {
    if (this.client === client) this.client = null;
    client.end().catch(() => undefined);
    if (this.closed) return;
    this.onError(error);
    const delay = Math.min(30_000, 250 * 2 ** Math.min(attempt, 7));
    this.retryTimer = setTimeout(() => {
      this.retryTimer = null;
      if (!this.closed && !this.client && !this.connecting) this.connect(attempt);
    }, delay);
    this.retryTimer.unref();
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
