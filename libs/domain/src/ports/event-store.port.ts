import type { StoredToolEvent, ToolEvent, ToolEventType } from '@toolhistory/contract';

/** A stream is one conversation of one tenant. */
export interface StreamRef {
  tenantId: string;
  conversationId: string;
}

/**
 * A position in the store's global order, as a decimal string: positions
 * are int64 (EventStoreDB's commit positions pass 2^53). "0" is before the
 * first event. Compare with `comparePositions`, never as strings.
 */
export type GlobalPosition = string;

export const START_POSITION: GlobalPosition = '0';

export function comparePositions(a: GlobalPosition, b: GlobalPosition): number {
  const x = BigInt(a);
  const y = BigInt(b);
  return x < y ? -1 : x > y ? 1 : 0;
}

/**
 * What the writer believes about the stream before appending:
 * `any` (no check), `no_stream` (never written), or the stream's current
 * last position (1 after one event).
 */
export type ExpectedStreamPosition = 'any' | 'no_stream' | number;

export interface AppendOptions {
  expectedPosition?: ExpectedStreamPosition;
  /** The producers' W3C trace context per eventId (lower case), kept beside each event, never in its payload. */
  traceparents?: ReadonlyMap<string, string>;
}

export interface AppendResult {
  /** The stream's last position after the append. */
  streamPosition: number;
  /** Events written now. */
  appended: number;
  /** Events whose eventId was already recorded: not written again (idempotent retries). */
  duplicates: number;
  /** The global position of the last event written now, when the store tells it (absent when nothing was written). */
  globalPosition?: GlobalPosition;
}

/** An event as the store holds it, upcast to the current schema version. */
export interface RecordedToolEvent {
  globalPosition: GlobalPosition;
  /** 1-based position within its conversation's stream. */
  streamPosition: number;
  recordedAt: string;
  event: ToolEvent;
  /** The trace context the event was appended with, if any. */
  traceparent?: string;
}

/**
 * What a projection that needs only an event's keys takes of it: which
 * event, and which conversation, run and (for the events of an invocation)
 * pair it touches. A RecordedToolEvent is one; a store may also answer
 * these without reading payloads (EventKeyFeed).
 */
export interface EventKeys {
  eventId: string;
  type: ToolEventType;
  tenantId: string;
  conversationId: string;
  runId: string;
  /** An invocation's event: its pair key (read-model-keys.ts), where the store keeps it... */
  pairKey?: string;
  /** ...else the members it is made of. */
  toolCallId?: string;
  roundIndex?: number;
  sequenceIndex?: number;
}

/** An event's keys at its place in the global order. */
export interface RecordedEventKeys {
  globalPosition: GlobalPosition;
  recordedAt: string;
  event: EventKeys;
}

/**
 * The store's events in global order, keys only: what a projection that
 * rewrites rows by key follows, without reading (or opening) payloads.
 * Same order, resumption and live tail as `EventStore.subscribe`.
 */
export interface EventKeyFeed {
  subscribe(after: GlobalPosition, options?: SubscribeOptions): AsyncIterable<RecordedEventKeys>;
}

export interface ReadAllOptions {
  /** Only this tenant's events. */
  tenantId?: string;
  /** Only these types (all when absent or empty). */
  types?: readonly ToolEventType[];
  /** At most this many events. */
  limit: number;
}

export interface SubscribeOptions extends Omit<ReadAllOptions, 'limit'> {
  /** Ends the subscription: the iterator returns. */
  signal?: AbortSignal;
}

/**
 * The source of truth: append-only streams per conversation, idempotent by
 * eventId, with a global order that subscribers can follow and resume
 * without gaps or duplicates (an event committed later never appears
 * behind a position a reader already passed).
 */
export interface EventStore {
  /**
   * Appends to one stream, each event in the schema version it was
   * received in. Events already recorded (by eventId) are skipped, and an
   * append made only of such events succeeds whatever the expected position. Otherwise a stream not at `expectedPosition` fails with
   * CONCURRENCY_CONFLICT, and an erased stream with STREAM_ERASED.
   */
  append(stream: StreamRef, events: readonly StoredToolEvent[], options?: AppendOptions): Promise<AppendResult>;
  /** The stream's events in order; empty when unknown or erased. */
  readStream(stream: StreamRef): Promise<RecordedToolEvent[]>;
  /** Events after `after` in global order. */
  readAll(after: GlobalPosition, options: ReadAllOptions): Promise<RecordedToolEvent[]>;
  /**
   * Events after `after` in global order: first those recorded, then live
   * ones as they are recorded, until the signal aborts or the consumer stops
   * iterating.
   */
  subscribe(after: GlobalPosition, options?: SubscribeOptions): AsyncIterable<RecordedToolEvent>;
  /** Removes a stream's events and leaves a tombstone; answers how many were removed. */
  deleteStream(stream: StreamRef): Promise<number>;
}
