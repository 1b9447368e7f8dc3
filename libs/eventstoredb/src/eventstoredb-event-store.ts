import { KurrentDBClient, jsonEvent, streamNameFilter } from '@kurrent/kurrentdb-client';
import type { AllStreamResolvedEvent, JSONType, Position, RecordedEvent, ResolvedEvent } from '@kurrent/kurrentdb-client';
import { LRUCache } from 'lru-cache';
import { StoredToolEvent, upcastToolEvent } from '@toolhistory/contract';
import type {
  AppendOptions,
  AppendResult,
  EventStore,
  GlobalPosition,
  ReadAllOptions,
  RecordedToolEvent,
  StreamRef,
  SubscribeOptions,
} from '@toolhistory/domain';
import { AppError, ErrorCode, rejected } from '@toolhistory/errors';
import { classifyEventStoreDbError, isStreamErased, isStreamGone } from './eventstoredb-errors';
import {
  expectationHolds,
  expectedRevisionFor,
  isAfter,
  parseGlobalPosition,
  readPositionAfter,
  revisionAt,
  streamNameOf,
  streamPositionOf,
  tenantStreamPrefix,
  toGlobalPosition,
} from './eventstoredb-mapping';
import { subscriptionFeed } from './subscription-feed';

/** Events asked of the server per page of a $all read. */
const READ_PAGE = 512;

/** The tombstone EventStoreDB writes into a hard-deleted stream; it shows up in $all. */
const TOMBSTONE_EVENT_TYPE = '$streamDeleted';

export interface EventStoreDbEventStoreOptions {
  /** Appends with expectation 'any' that lose a race are retried this many times in all. */
  maxAppendAttempts?: number;
  /** Erased streams remembered, so their old events in $all cost no lookup. */
  erasedStreamsCached?: number;
  /** Streams a subscription remembers as not erased. */
  liveStreamsCachedPerSubscription?: number;
}

/** Streams a read or a subscription has found not erased (a Map for a read, bounded for a subscription). */
type StreamCache = { has(name: string): boolean; set(name: string, value: true): unknown };

/** What one read or subscription of $all keeps. */
interface ReadScope {
  after: bigint;
  prefix: string;
  types: ReadonlySet<string> | null;
  live: StreamCache;
}

/**
 * The EventStore port on EventStoreDB / KurrentDB, through the gRPC client.
 * One stream per conversation (eventstoredb-mapping.ts); events are JSON
 * events whose id is the eventId and whose data is the event as recorded.
 */
export class EventStoreDbEventStore implements EventStore {
  private readonly maxAppendAttempts: number;
  private readonly liveStreamsCached: number;
  /** Tombstones are final, so what is known erased stays erased. */
  private readonly erased: LRUCache<string, true>;

  constructor(
    private readonly client: KurrentDBClient,
    options: EventStoreDbEventStoreOptions = {},
  ) {
    this.maxAppendAttempts = options.maxAppendAttempts ?? 10;
    this.liveStreamsCached = options.liveStreamsCachedPerSubscription ?? 10_000;
    this.erased = new LRUCache({ max: options.erasedStreamsCached ?? 10_000 });
  }

  /** A store on its own client, e.g. `esdb://127.0.0.1:2113?tls=false`; `close()` disposes of it. */
  static connect(connectionString: string, options: EventStoreDbEventStoreOptions = {}): EventStoreDbEventStore {
    return new EventStoreDbEventStore(KurrentDBClient.connectionString(connectionString), options);
  }

  /** Disposes of the client given to the store (its connections and any subscription still open on them). */
  close(): Promise<void> {
    return this.client.dispose();
  }

  /**
   * EventStoreDB only recognises a repeated event id when the same write is
   * retried with the same expected revision, so idempotency across time is
   * done here: read the stream's event ids (conversations are small), write
   * only the new events, and write them at the revision just read. If
   * another writer got in between, the server refuses the write and the
   * stream is read again: the events may be there now (a duplicate, which
   * succeeds), the caller's expectation may no longer hold (a conflict), or,
   * with expectation 'any', the write is simply tried again.
   */
  async append(stream: StreamRef, events: readonly StoredToolEvent[], options: AppendOptions = {}): Promise<AppendResult> {
    const foreign = events.find((e) => e.tenantId !== stream.tenantId || e.conversationId !== stream.conversationId);
    if (foreign) {
      throw rejected(
        ErrorCode.InvalidArgument,
        `event ${foreign.eventId} belongs to ${describe(foreign)}, not to the stream ${describe(stream)}`,
      );
    }
    const expected = options.expectedPosition ?? 'any';
    const name = streamNameOf(stream);
    for (let attempt = 1; ; attempt += 1) {
      const state = await this.streamState(name);
      const fresh = withoutRecorded(events, state.eventIds);
      const duplicates = events.length - fresh.length;
      if (fresh.length === 0) return { streamPosition: state.count, appended: 0, duplicates };
      if (state.erased) throw new AppError(ErrorCode.StreamErased, `stream ${describe(stream)} was erased`);
      if (!expectationHolds(expected, state.count)) {
        throw new AppError(
          ErrorCode.ConcurrencyConflict,
          `stream ${describe(stream)} is at position ${state.count}, expected ${expected === 'no_stream' ? 'no stream' : expected}`,
          { details: { actual: state.count, expected } },
        );
      }
      try {
        const result = await this.client.appendToStream(
          name,
          fresh.map((e) => toEventData(e, options.traceparents)),
          {
            streamState: expectedRevisionFor(expected, state.count),
          },
        );
        // Only a client built with throwOnAppendFailure: false answers a refused write this way.
        if (result.success) {
          return {
            streamPosition: streamPositionOf(result.nextExpectedRevision),
            appended: fresh.length,
            duplicates,
            ...(result.position === undefined ? {} : { globalPosition: toGlobalPosition(result.position) }),
          };
        }
      } catch (error) {
        const failure = classifyEventStoreDbError(error);
        if (failure.code !== ErrorCode.ConcurrencyConflict) throw failure;
      }
      if (attempt >= this.maxAppendAttempts) {
        // Only reachable with 'any' (any other expectation fails on the next read): contention, which passes.
        throw new AppError(ErrorCode.Contention, `stream ${describe(stream)} kept changing during ${attempt} append attempts`);
      }
    }
  }

  async readStream(stream: StreamRef): Promise<RecordedToolEvent[]> {
    try {
      const entries = await collect(this.client.readStream(streamNameOf(stream)));
      return entries.flatMap((entry) => {
        const event = entry.event;
        if (!event || isSystemEvent(event)) return [];
        return [toRecorded(event, event.position ?? positionOfStreamRead(entry, event))];
      });
    } catch (error) {
      if (isStreamGone(error)) return [];
      throw classifyEventStoreDbError(error);
    }
  }

  /**
   * A read of $all filtered on the server by stream-name prefix (the
   * tenant's, else ours), in pages of `READ_PAGE` events from the last
   * position seen. The read ends at the end of $all as it stood, so no
   * caught-up mark or idle guard is needed. Events the server sends that the
   * port does not show (system events, other types, erased streams) are
   * skipped here; a full page means more may follow.
   */
  async readAll(after: GlobalPosition, options: ReadAllOptions): Promise<RecordedToolEvent[]> {
    const scope = this.scopeOf(after, options, new Map<string, true>());
    if (options.limit <= 0) return [];
    const filter = streamNameFilter({ prefixes: [scope.prefix] });
    const out: RecordedToolEvent[] = [];
    let from = readPositionAfter(scope.after);
    let last: Position | undefined;
    try {
      for (;;) {
        let sent = 0;
        for await (const resolved of this.client.readAll({ fromPosition: from, filter, maxCount: READ_PAGE })) {
          sent += 1;
          const position = resolved.event?.position;
          // A page may start at the position it was asked from: that event was taken already.
          if (!position || (last && !positionIsAfter(position, last))) continue;
          last = position;
          from = { commit: position.commit, prepare: position.prepare };
          const recorded = await this.accept(resolved, scope);
          if (recorded) out.push(recorded);
          if (out.length >= options.limit) return out;
        }
        if (sent < READ_PAGE) return out;
      }
    } catch (error) {
      throw classifyEventStoreDbError(error);
    }
  }

  /**
   * A catch-up subscription to $all after the position, filtered on the
   * server by stream-name prefix (the tenant's, else ours) and by type here.
   * It never ends on its own: a dropped connection fails the iteration
   * (retriably), and the consumer resumes after the last position it saw.
   */
  async *subscribe(after: GlobalPosition, options: SubscribeOptions = {}): AsyncIterable<RecordedToolEvent> {
    const { signal, ...filter } = options;
    const scope = this.scopeOf(after, filter, new LRUCache<string, true>({ max: this.liveStreamsCached }));
    if (signal?.aborted) return;
    try {
      const subscription = this.client.subscribeToAll({
        fromPosition: readPositionAfter(scope.after),
        filter: streamNameFilter({ prefixes: [scope.prefix] }),
      });
      for await (const item of subscriptionFeed<AllStreamResolvedEvent>(subscription, { signal })) {
        if (item.kind !== 'event') continue;
        const recorded = await this.accept(item.value, scope);
        if (signal?.aborted) return;
        if (recorded) yield recorded;
      }
    } catch (error) {
      throw classifyEventStoreDbError(error);
    }
    if (signal?.aborted) return;
    throw new AppError(ErrorCode.StorageUnavailable, 'EventStoreDB ended the subscription to $all');
  }

  /**
   * Tombstones the stream at the revision just read, so the count answered
   * is exactly what the tombstone hides; a write in between makes the server
   * refuse, and the stream is counted again. An unknown stream is
   * tombstoned too, so its events cannot arrive later (as with PostgreSQL).
   */
  async deleteStream(stream: StreamRef): Promise<number> {
    const name = streamNameOf(stream);
    for (let attempt = 1; ; attempt += 1) {
      const state = await this.streamState(name);
      if (state.erased) return 0;
      try {
        await this.client.tombstoneStream(name, { expectedRevision: revisionAt(state.count) });
        this.erased.set(name, true);
        return state.count;
      } catch (error) {
        // Erased meanwhile by someone else, who answered the count.
        if (isStreamErased(error)) return 0;
        const failure = classifyEventStoreDbError(error);
        if (failure.code !== ErrorCode.ConcurrencyConflict) throw failure;
        // Still changing after every attempt: contention, which passes.
        if (attempt >= this.maxAppendAttempts) throw new AppError(ErrorCode.Contention, failure.message, { cause: error });
      }
    }
  }

  private scopeOf(after: GlobalPosition, filter: Omit<ReadAllOptions, 'limit'>, live: StreamCache): ReadScope {
    const types = filter.types && filter.types.length > 0 ? new Set<string>(filter.types) : null;
    return { after: parseGlobalPosition(after), prefix: tenantStreamPrefix(filter.tenantId), types, live };
  }

  /**
   * An event of $all as the port shows it, or null when it is not one: at
   * or before the start, a system event (the tombstone included), not in
   * the prefix, of another type, or of a stream erased since. A tombstone
   * hides a stream's events from stream reads at once, but they stay in $all
   * until a scavenge removes them, so each stream met is checked once.
   */
  private async accept(resolved: AllStreamResolvedEvent, scope: ReadScope): Promise<RecordedToolEvent | null> {
    const event = resolved.event;
    if (!event || !isAfter(event.position, scope.after)) return null;
    if (isSystemEvent(event)) {
      if (event.type === TOMBSTONE_EVENT_TYPE) this.erased.set(event.streamId, true);
      return null;
    }
    // The server filtered on the prefix already; checked again because all that follows relies on it.
    if (!event.streamId.startsWith(scope.prefix)) return null;
    const recorded = toRecorded(event, event.position);
    // On the upcast event: the type a reader asks for is the current schema's.
    if (scope.types && !scope.types.has(recorded.event.type)) return null;
    if (await this.isErased(event.streamId, scope.live)) return null;
    return recorded;
  }

  private async isErased(name: string, live: StreamCache): Promise<boolean> {
    if (this.erased.has(name)) return true;
    if (live.has(name)) return false;
    try {
      await collect(this.client.readStream(name, { maxCount: 1 }));
      live.set(name, true);
      return false;
    } catch (error) {
      if (!isStreamGone(error)) throw classifyEventStoreDbError(error);
      if (isStreamErased(error)) this.erased.set(name, true);
      return true;
    }
  }

  /** The stream's size and event ids, or that it was erased. */
  private async streamState(name: string): Promise<{ count: number; eventIds: ReadonlySet<string>; erased: boolean }> {
    try {
      const entries = await collect(this.client.readStream(name));
      const eventIds = new Set<string>();
      let count = 0;
      for (const { event } of entries) {
        if (!event) continue;
        eventIds.add(event.id.toLowerCase());
        count = streamPositionOf(event.revision);
      }
      return { count, eventIds, erased: false };
    } catch (error) {
      if (isStreamErased(error)) {
        this.erased.set(name, true);
        return { count: 0, eventIds: new Set(), erased: true };
      }
      if (isStreamGone(error)) return { count: 0, eventIds: new Set(), erased: false };
      throw classifyEventStoreDbError(error);
    }
  }
}

/**
 * Drops events already in the stream and repeats within the list. Ids are
 * compared in lower case: EventStoreDB keeps them as UUIDs, whatever the
 * case they were written in.
 */
function withoutRecorded(events: readonly StoredToolEvent[], recorded: ReadonlySet<string>): StoredToolEvent[] {
  const seen = new Set(recorded);
  return events.filter((e) => {
    const id = e.eventId.toLowerCase();
    if (seen.has(id)) return false;
    seen.add(id);
    return true;
  });
}

/** Written as received, in its own schema version (readers upcast it); the trace context goes in the metadata, never the data. */
function toEventData(event: StoredToolEvent, traceparents: ReadonlyMap<string, string> | undefined) {
  const data: JSONType = { ...event };
  const traceparent = traceparents?.get(event.eventId.toLowerCase());
  return jsonEvent({ id: event.eventId, type: event.type, data, ...(traceparent ? { metadata: { traceparent } } : {}) });
}

/** The trace context kept in an event's metadata, when it holds one. */
function traceparentOf(event: RecordedEvent): string | undefined {
  let metadata: unknown = event.metadata;
  // A client that did not parse the metadata gives its bytes.
  if (metadata instanceof Uint8Array) {
    try {
      metadata = JSON.parse(Buffer.from(metadata).toString('utf8'));
    } catch {
      return undefined;
    }
  }
  if (typeof metadata !== 'object' || metadata === null) return undefined;
  const { traceparent } = metadata as { traceparent?: unknown };
  return typeof traceparent === 'string' && traceparent !== '' ? traceparent : undefined;
}

function toRecorded(event: RecordedEvent, position: Position): RecordedToolEvent {
  const data: unknown = event.data;
  if (!event.isJson || typeof data !== 'object' || data === null || Array.isArray(data) || data instanceof Uint8Array) {
    throw new AppError(ErrorCode.Internal, `event ${event.id} of stream ${event.streamId} is not a JSON object`);
  }
  const traceparent = traceparentOf(event);
  return {
    globalPosition: toGlobalPosition(position),
    streamPosition: streamPositionOf(event.revision),
    recordedAt: event.created.toISOString(),
    event: upcastToolEvent(data),
    ...(traceparent ? { traceparent } : {}),
  };
}

/** Stream reads carry the event's $all position since EventStoreDB 22.6; older servers are not supported. */
function positionOfStreamRead(entry: ResolvedEvent, event: RecordedEvent): Position {
  if (entry.commitPosition === undefined) {
    throw new AppError(ErrorCode.Internal, `EventStoreDB reported no position for event ${event.id} (version 22.6 or later is needed)`);
  }
  return { commit: entry.commitPosition, prepare: entry.commitPosition };
}

function isSystemEvent(event: { type: string }): boolean {
  return event.type.startsWith('$');
}

async function collect<T>(read: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const item of read) out.push(item);
  return out;
}

function describe(ref: StreamRef): string {
  return `${ref.tenantId}/${ref.conversationId}`;
}

/** $all order: by commit position, then prepare position. */
function positionIsAfter(position: Position, other: Position): boolean {
  return position.commit > other.commit || (position.commit === other.commit && position.prepare > other.prepare);
}
