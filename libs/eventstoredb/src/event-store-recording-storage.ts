import type { StoredToolEvent } from '@toolhistory/contract';
import {
  type AppendedEvents,
  type ConsumerOffsets,
  conversationKeyString,
  type EventStore,
  hasResultWithoutItsCall,
  NO_STORED_OFFSET,
  type Offset,
  type OffsetEvent,
  type OpenedStreams,
  type PartitionRef,
  type ReasoningStep,
  type ReasoningStore,
  type RecordedBefore,
  type RecordingStorage,
  type RecordingUnit,
  type StreamRef,
} from '@toolhistory/domain';
import { AppError, ErrorCode } from '@toolhistory/errors';

/**
 * Recording into an event store that is not the read model's database
 * (EventStoreDB), through the domain's `EventStore` port: each
 * conversation's new events are appended (idempotent by eventId), then the
 * partition's offset moves (`ConsumerOffsets`, kept beside the read model).
 * There is no transaction: a crash in between redelivers the batch, and the
 * repeats are skipped by eventId, so the effect is still exactly once. The
 * read model follows the store through the projector, not here.
 *
 * Unlike PostgreSQL, a result recorded before its call keeps the default
 * rule: stored events cannot be rewritten here once the call names the tool
 * (docs/adr/007).
 */
export class EventStoreRecordingStorage implements RecordingStorage {
  constructor(
    private readonly events: EventStore,
    private readonly offsets: ConsumerOffsets,
    /** Where reasoning state rests; without one none is kept (it replays as expired). */
    private readonly reasoning: ReasoningStore = KEEP_NO_REASONING,
  ) {}

  /** The steps in order; the offset moves once the work is done, after the appends. */
  async inUnitOfWork<T>(_partitions: readonly PartitionRef[], work: (unit: RecordingUnit) => Promise<T>): Promise<T> {
    const unit = new EventStoreRecordingUnit(this.events, this.offsets, this.reasoning);
    const result = await work(unit);
    await unit.complete();
    return result;
  }

  committedOffsets(consumerGroup: string, topic: string): Promise<Map<number, Offset>> {
    return this.offsets.committed(consumerGroup, topic);
  }
}

class EventStoreRecordingUnit implements RecordingUnit {
  /** Where `advance` moves each partition, once the unit completes. */
  private readonly advanced: Array<{ partition: PartitionRef; nextOffset: Offset }> = [];
  /** The highest global position appended by the unit, told with the offset. */
  private lastPosition: bigint | null = null;

  constructor(
    private readonly events: EventStore,
    private readonly offsets: ConsumerOffsets,
    private readonly reasoning: ReasoningStore,
  ) {}

  /**
   * The state rests beside the read model, not in the event store (where no
   * single event can lose it later); a repeat of the unit writes it again,
   * harmlessly (keyed by the response's event id).
   */
  keepReasoning(steps: readonly ReasoningStep[]): Promise<void> {
    return this.reasoning.apply(steps);
  }

  /** Read, not locked: a concurrent unit of the same partition can only append what is already there (idempotent). */
  async storedOffset(partition: PartitionRef): Promise<bigint> {
    const stored = (await this.offsets.committed(partition.consumerGroup, partition.topic)).get(partition.partition);
    return stored === undefined ? NO_STORED_OFFSET : BigInt(stored);
  }

  /** Nothing is dropped here: the store skips what a stream holds already as it appends, and counts it (`append`). */
  async withoutRecorded(events: readonly OffsetEvent[]): Promise<OffsetEvent[]> {
    return [...events];
  }

  /** Nothing to claim: streams are not locked, and an erased one is found on append (STREAM_ERASED). */
  async openStreams(events: readonly OffsetEvent[]): Promise<OpenedStreams> {
    return { open: [...events], erased: 0 };
  }

  /** The calls a stream holds, read only for a stream whose batch has a result without its call. No read model here. */
  async recordedBefore(events: readonly StoredToolEvent[]): Promise<RecordedBefore> {
    const calls: StoredToolEvent[] = [];
    for (const { ref, events: ofStream } of byStream(events, (e) => e)) {
      if (hasResultWithoutItsCall(ofStream)) calls.push(...(await this.events.readStream(ref)).map((r) => r.event));
    }
    return { toolNames: { calls } };
  }

  /** Kept until the unit completes: the offset must not move ahead of the appends. */
  async advance(partition: PartitionRef, nextOffset: Offset): Promise<void> {
    this.advanced.push({ partition, nextOffset });
  }

  /** One append per stream; a stream already erased counts its events as erased, and the others go on. */
  async append(events: readonly OffsetEvent[]): Promise<AppendedEvents> {
    // Kept beside each event in the store (EventStoreDB: its metadata), never in the payload.
    const traceparents = new Map(events.flatMap((m) => (m.traceparent ? [[m.event.eventId.toLowerCase(), m.traceparent] as const] : [])));
    const outcome: AppendedEvents = { written: [], duplicates: 0, erased: 0 };
    for (const { ref, events: ofStream } of byStream(events, (m) => m.event)) {
      try {
        const appended = await this.events.append(ref, ofStream, { traceparents });
        outcome.duplicates += appended.duplicates;
        if (appended.appended === 0) continue;
        if (appended.globalPosition !== undefined && (this.lastPosition === null || BigInt(appended.globalPosition) > this.lastPosition))
          this.lastPosition = BigInt(appended.globalPosition);
        // The store skips duplicates wherever they are; what it appended is then the stream's tail.
        const written =
          appended.duplicates === 0 ? ofStream : (await this.events.readStream(ref)).slice(-appended.appended).map((r) => r.event);
        outcome.written.push(...written);
      } catch (error) {
        if (!(error instanceof AppError && error.code === ErrorCode.StreamErased)) throw error;
        outcome.erased += ofStream.length;
      }
    }
    return outcome;
  }

  async complete(): Promise<void> {
    for (const { partition, nextOffset } of this.advanced) await this.offsets.advance(partition, nextOffset, this.lastPosition?.toString());
  }
}

const KEEP_NO_REASONING: ReasoningStore = { apply: async () => undefined };

/** The events of each conversation, streams in the order they first appear. */
function byStream<T>(items: readonly T[], eventOf: (item: T) => StoredToolEvent): Array<{ ref: StreamRef; events: StoredToolEvent[] }> {
  const streams = new Map<string, { ref: StreamRef; events: StoredToolEvent[] }>();
  for (const item of items) {
    const event = eventOf(item);
    const key = conversationKeyString(event);
    const entry = streams.get(key) ?? { ref: { tenantId: event.tenantId, conversationId: event.conversationId }, events: [] };
    entry.events.push(event);
    streams.set(key, entry);
  }
  return [...streams.values()];
}
