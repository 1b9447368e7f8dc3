import { Client } from 'pg';
import { connectionUrl, type DatabaseSettings } from './database';

export interface ChannelListenerHandlers {
  notification(payload: string): void;
  /** LISTEN is in place: from now on every notification is delivered. */
  listening(): void;
  /** Notifications may be missed from now until the next `listening`. */
  lost(error: Error): void;
}

export interface ChannelListenerOptions {
  /**
   * How often the listening connection proves it is alive with a round
   * trip. A connection that dies without an error (a network that drops
   * packets) is noticed after at most twice this.
   */
  heartbeatMs?: number;
}

const DEFAULT_HEARTBEAT_MS = 1_000;

/**
 * One connection that LISTENs on one channel, reconnecting with backoff.
 * It says when it is listening and when it stopped, so its users know when
 * a missed notification is possible: between `lost` and the next
 * `listening`.
 */
export class PostgresChannelListener {
  /** The connection being opened or listening; events of any other are stale. */
  private current: Client | null = null;
  /** Set once `current` is listening. */
  private client: Client | null = null;
  private connecting: Promise<void> | null = null;
  private closed = false;
  private retryTimer: NodeJS.Timeout | null = null;
  private heartbeat: NodeJS.Timeout | null = null;
  private readonly heartbeatMs: number;

  constructor(
    private readonly settings: DatabaseSettings,
    private readonly channel: string,
    private readonly handlers: ChannelListenerHandlers,
    options: ChannelListenerOptions = {},
  ) {
    this.heartbeatMs = options.heartbeatMs ?? DEFAULT_HEARTBEAT_MS;
  }

  /** Starts listening unless it already is (or is on its way, or closed). */
  start(): void {
    if (!this.closed && !this.current && !this.retryTimer) this.connect(0);
  }

  get isListening(): boolean {
    return this.client !== null;
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.retryTimer) clearTimeout(this.retryTimer);
    this.stopHeartbeat();
    await this.connecting?.catch(() => undefined);
    const client = this.current;
    this.current = null;
    this.client = null;
    await client?.end().catch(() => undefined);
  }

  private connect(attempt: number): void {
    const client = new Client({
      connectionString: connectionUrl(this.settings),
      application_name: 'toolhistory-listener',
      connectionTimeoutMillis: 5_000,
      keepAlive: true,
    });
    this.current = client;
    client.on('notification', (message) => {
      if (this.client === client && message.payload !== undefined) this.handlers.notification(message.payload);
    });
    client.on('error', (error) => this.lose(client, error, 0));
    client.on('end', () => this.lose(client, new Error('the listening connection closed'), 0));
    this.connecting = client
      .connect()
      .then(() => client.query(`LISTEN ${this.channel}`))
      .then(() => {
        if (this.closed || this.current !== client) return void client.end().catch(() => undefined);
        this.client = client;
        this.startHeartbeat(client);
        this.handlers.listening();
      })
      .catch((error: Error) => this.lose(client, error, attempt + 1))
      .finally(() => (this.connecting = null));
  }

  private startHeartbeat(client: Client): void {
    this.stopHeartbeat();
    let answered = true;
    this.heartbeat = setInterval(() => {
      if (!answered) return this.lose(client, new Error(`the listening connection did not answer within ${this.heartbeatMs} ms`), 0);
      answered = false;
      client.query('SELECT 1').then(
        () => (answered = true),
        (error: Error) => this.lose(client, error, 0),
      );
    }, this.heartbeatMs);
    this.heartbeat.unref();
  }

  private stopHeartbeat(): void {
    if (this.heartbeat) clearInterval(this.heartbeat);
    this.heartbeat = null;
  }

  /** Drops the connection (once per connection) and tries again after a backoff. */
  private lose(client: Client, error: Error, attempt: number): void {
    if (client !== this.current) return;
    this.current = null;
    this.client = null;
    this.stopHeartbeat();
    client.end().catch(() => undefined);
    if (this.closed) return;
    this.handlers.lost(error);
    const delay = Math.min(30_000, 250 * 2 ** Math.min(attempt, 7));
    this.retryTimer = setTimeout(() => {
      this.retryTimer = null;
      if (!this.closed && !this.current) this.connect(attempt);
    }, delay);
    this.retryTimer.unref();
  }
}
