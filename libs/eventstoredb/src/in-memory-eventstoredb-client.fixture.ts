import { randomUUID } from 'node:crypto';
import { EventEmitter } from 'node:events';
import {
  ANY,
  NO_STREAM,
  START,
  StreamDeletedError,
  StreamNotFoundError,
  UnavailableError,
  WrongExpectedVersionError,
} from '@kurrent/kurrentdb-client';
import type {
  AllStreamResolvedEvent,
  AppendStreamState,
  EventData,
  KurrentDBClient,
  Filter,
  Position,
  ReadPosition,
  ResolvedEvent,
} from '@kurrent/kurrentdb-client';

/**
 * A model of the few EventStoreDB client calls the adapter makes, with the
 * server behaviour it relies on, as documented and as read in the server's
 * source: positions are the events' own log positions (here beyond 2^53,
 * so they only survive as bigints), a catch-up subscription starts after
 * its position and reports being caught up, a tombstone refuses writes and
 * stream reads at once while the stream's events stay in $all (followed by
 * a "$streamDeleted" event), and a wrong expected revision is refused.
 * It lets the adapter's own logic run through the contract suite in the
 * unit tier; it proves nothing about a real server.
 */
export class InMemoryEventStoreDbClient {
  private readonly log: StoredRecord[] = [];
  private readonly streams = new Map<string, { revision: bigint; tombstoned: boolean }>();
  private readonly subscriptions = new Set<FakeSubscription>();
  private nextPosition = 2n ** 53n + 1_000n;
  /** Reads of $all asked for (each a page). */
  readsOfAll = 0;

  get openSubscriptions(): number {
    return this.subscriptions.size;
  }

  asClient(): KurrentDBClient {
    return this as unknown as KurrentDBClient;
  }

  async appendToStream(name: string, events: EventData[], options: { streamState?: AppendStreamState } = {}) {
    await tick();
    const stream = this.streams.get(name);
    if (stream?.tombstoned) throw StreamDeletedError.fromStreamName(name);
    const current = stream ? stream.revision : -1n;
    this.checkExpected(name, options.streamState ?? ANY, current);
    let revision = current;
    for (const event of events) {
      revision += 1n;
      this.write({
        streamId: name,
        id: event.id.toLowerCase(),
        type: event.type,
        json: JSON.stringify(event.data),
        ...(event.metadata === undefined ? {} : { metadataJson: JSON.stringify(event.metadata) }),
        revision,
      });
    }
    this.streams.set(name, { revision, tombstoned: false });
    return { success: true, nextExpectedRevision: revision, position: undefined };
  }

  readStream(name: string, options: { maxCount?: number } = {}): AsyncIterable<ResolvedEvent> {
    const { streams, log } = this;
    return (async function* () {
      await tick();
      const stream = streams.get(name);
      if (stream?.tombstoned) throw StreamDeletedError.fromStreamName(name);
      if (!stream) throw new StreamNotFoundError(undefined, name);
      const records = log.filter((r) => r.streamId === name).slice(0, options.maxCount ?? Number.MAX_SAFE_INTEGER);
      for (const record of records) yield toResolved(record);
    })();
  }

  async tombstoneStream(name: string, options: { expectedRevision?: AppendStreamState } = {}) {
    await tick();
    const stream = this.streams.get(name);
    if (stream?.tombstoned) throw StreamDeletedError.fromStreamName(name);
    this.checkExpected(name, options.expectedRevision ?? ANY, stream ? stream.revision : -1n);
    this.streams.set(name, { revision: stream?.revision ?? -1n, tombstoned: true });
    this.write({ streamId: name, id: randomUUID(), type: '$streamDeleted', json: '{}', revision: 2n ** 63n - 1n });
    return {};
  }

  /**
   * A forward read of $all with the server-side prefix filter: at most
   * `maxCount` matching events, ending at the end of the log. It starts at
   * the position itself (inclusive), so a reader resuming from the last
   * event it saw must not take that event twice.
   */
  readAll(
    options: { fromPosition?: ReadPosition; filter?: Filter; maxCount?: number | bigint } = {},
  ): AsyncIterableIterator<AllStreamResolvedEvent> {
    this.readsOfAll += 1;
    const from = options.fromPosition ?? START;
    const prefixes = options.filter && 'prefixes' in options.filter ? options.filter.prefixes : null;
    const atOrAfter = (p: Position) =>
      from === START || (from !== 'end' && (p.commit > from.commit || (p.commit === from.commit && p.prepare >= from.prepare)));
    const records = this.log
      .filter((r) => atOrAfter(r.position) && (prefixes === null || prefixes.some((prefix) => r.streamId.startsWith(prefix))))
      .slice(0, Number(options.maxCount ?? Number.MAX_SAFE_INTEGER));
    return (async function* () {
      for (const record of records) {
        await tick();
        yield toResolved(record) as AllStreamResolvedEvent;
      }
    })();
  }

  subscribeToAll(options: { fromPosition?: ReadPosition; filter?: Filter } = {}): FakeSubscription {
    const from = options.fromPosition ?? START;
    const after = from === START ? -1n : from === 'end' ? this.nextPosition : from.commit;
    const prefixes = options.filter && 'prefixes' in options.filter ? options.filter.prefixes : null;
    const subscription = new FakeSubscription(() => this.subscriptions.delete(subscription));
    const matches = (record: StoredRecord) => prefixes === null || prefixes.some((p) => record.streamId.startsWith(p));
    subscription.deliver = (record: StoredRecord) => {
      if (matches(record)) subscription.send(toResolved(record) as AllStreamResolvedEvent);
    };
    this.subscriptions.add(subscription);
    setImmediate(() => {
      if (subscription.closed) return;
      // Catch-up, then live: the server starts after the position (exclusive).
      for (const record of this.log) if (record.position.commit > after) subscription.deliver(record);
      subscription.emitCaughtUp();
      subscription.live = true;
    });
    return subscription;
  }

  /** Drops every open subscription as a failing server would. */
  failSubscriptions(): void {
    for (const subscription of this.subscriptions) subscription.fail(new UnavailableError(undefined, 'connection lost'));
  }

  /** Ends every open subscription as a server closing the call would. */
  endSubscriptions(): void {
    for (const subscription of this.subscriptions) subscription.end();
  }

  async dispose(): Promise<void> {}

  private checkExpected(streamName: string, expected: AppendStreamState, current: bigint): void {
    const holds =
      expected === ANY || (expected === NO_STREAM ? current === -1n : expected === 'stream_exists' ? current >= 0n : expected === current);
    if (!holds) {
      throw new WrongExpectedVersionError(undefined, { streamName, expected, current: current === -1n ? NO_STREAM : current });
    }
  }

  private write(record: Omit<StoredRecord, 'position' | 'created'>): void {
    const stored: StoredRecord = { ...record, position: { commit: this.nextPosition, prepare: this.nextPosition }, created: new Date() };
    // Log positions grow by the record's size.
    this.nextPosition += BigInt(100 + record.json.length);
    this.log.push(stored);
    for (const subscription of this.subscriptions) if (subscription.live) subscription.deliver(stored);
  }
}

interface StoredRecord {
  streamId: string;
  id: string;
  type: string;
  json: string;
  /** The event's metadata as JSON, when it was given one. */
  metadataJson?: string;
  revision: bigint;
  position: Position;
  created: Date;
}

/** The parts of the client's subscription (an object-mode Readable) the adapter uses. */
export class FakeSubscription extends EventEmitter {
  live = false;
  closed = false;
  paused = false;
  unsubscribed = false;
  deliver: (record: StoredRecord) => void = () => {};
  private readonly buffer: AllStreamResolvedEvent[] = [];

  constructor(private readonly onClose: () => void) {
    super();
  }

  get readableLength(): number {
    return this.buffer.length;
  }

  send(event: AllStreamResolvedEvent): void {
    if (this.closed) return;
    if (this.paused || this.buffer.length > 0) this.buffer.push(event);
    else this.emit('data', event);
  }

  emitCaughtUp(): void {
    if (!this.closed) this.emit('caughtUp');
  }

  fail(error: Error): void {
    this.emit('error', error);
  }

  end(): void {
    this.emit('end');
    this.close();
  }

  pause(): this {
    this.paused = true;
    return this;
  }

  resume(): this {
    this.paused = false;
    setImmediate(() => {
      while (!this.paused && !this.closed && this.buffer.length > 0) this.emit('data', this.buffer.shift());
    });
    return this;
  }

  async unsubscribe(): Promise<void> {
    this.unsubscribed = true;
    this.close();
  }

  destroy(): this {
    this.close();
    return this;
  }

  private close(): void {
    if (this.closed) return;
    this.closed = true;
    this.onClose();
  }
}

function toResolved(record: StoredRecord): ResolvedEvent {
  const event = {
    streamId: record.streamId,
    id: record.id,
    isJson: true,
    revision: record.revision,
    type: record.type,
    created: record.created,
    data: JSON.parse(record.json),
    metadata: record.metadataJson === undefined ? undefined : JSON.parse(record.metadataJson),
    position: record.position,
  };
  return { event: event as ResolvedEvent['event'], commitPosition: record.position.commit };
}

function tick(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}
