import type { Pool, PoolClient } from 'pg';
import type { StoredToolEvent } from '@toolhistory/contract';
import type {
  AppendedEvents,
  Offset,
  OffsetEvent,
  OpenedStreams,
  PartitionRef,
  ReadModelChanges,
  ReadModelInUnit,
  ReadModelState,
  ReasoningStep,
  RecordedBefore,
  RecordingStorage,
  RecordingUnit,
} from '@toolhistory/domain';
import { applyReasoningSteps } from './postgres-reasoning-state';
import { AppError, ErrorCode } from '@toolhistory/errors';
import { inTransaction } from './in-transaction';
import { advancePartitionOffset, lockPartitionOffset, PostgresConsumerOffsets } from './postgres-consumer-offsets';
import { allocateStreamPositions, insertEvents, PositionedEvent, withoutRecordedEvents } from './postgres-event-append';
import { loadReadModelState, writeReadModelChanges } from './postgres-read-model-writer';
import { notifyRecordingProgress } from './postgres-conversation-changes';
import { isoText } from './sql-rows';

/**
 * The PostgreSQL side of recording: one transaction per unit (a batch of
 * one partition, or of several gathered by the grouped recording), holding
 * the events, the read-model update and each partition's next offset
 * (docs/adr/001). The recording service runs the steps in an order
 * that takes the locks as ADR 001 and 002 say: the partitions' offset rows
 * first (in partition order), the stream rows next (per conversation, in a fixed order), the
 * global append lock last, only around allocating global positions,
 * inserting and committing.
 */
export class PostgresRecordingStorage implements RecordingStorage {
  private readonly offsets: PostgresConsumerOffsets;

  constructor(private readonly pool: Pool) {
    this.offsets = new PostgresConsumerOffsets(pool);
  }

  inUnitOfWork<T>(_partitions: readonly PartitionRef[], work: (unit: RecordingUnit) => Promise<T>): Promise<T> {
    return inTransaction(this.pool, (client) => work(new PostgresRecordingUnit(client)));
  }

  committedOffsets(consumerGroup: string, topic: string): Promise<Map<number, Offset>> {
    return this.offsets.committed(consumerGroup, topic);
  }
}

/** The steps of one unit, each a statement or a few in the unit's transaction. */
class PostgresRecordingUnit implements RecordingUnit {
  /** Each open event's position in its stream, by eventId (lower case), as `openStreams` numbered them. */
  private readonly streamPositions = new Map<string, number>();
  /** Where `advance` moved each partition: told to readers waiting for their events once the append has its positions. */
  private readonly advanced: Array<{ partition: PartitionRef; nextOffset: Offset }> = [];

  constructor(private readonly client: PoolClient) {}

  /** Locks the partition's offset row for the transaction: a consumer that still holds the partition after a rebalance waits here. */
  storedOffset(partition: PartitionRef): Promise<bigint> {
    return lockPartitionOffset(this.client, partition);
  }

  /** Across the whole store; exact, since a concurrent writer of the same ids serializes on the append lock. */
  withoutRecorded(events: readonly OffsetEvent[]): Promise<OffsetEvent[]> {
    return withoutRecordedEvents(this.client, events, (m) => m.event);
  }

  /** Locks and bumps each conversation's stream row, numbering its events; the row's tombstone drops an erased one's. */
  async openStreams(events: readonly OffsetEvent[]): Promise<OpenedStreams> {
    const { positioned, erased } = await allocateStreamPositions(
      this.client,
      events.map((m) => m.event),
    );
    for (const p of positioned) this.streamPositions.set(p.event.eventId.toLowerCase(), p.streamPosition);
    return { open: events.filter((m) => this.streamPositions.has(m.event.eventId.toLowerCase())), erased };
  }

  /** The read-model rows the batch touches, read under the stream locks: they name the tools, and the batch is projected into them. */
  async recordedBefore(events: readonly StoredToolEvent[]): Promise<RecordedBefore> {
    const state = await loadReadModelState(this.client, events);
    return { toolNames: { rows: state.invocations.values() }, readModel: new PostgresReadModelInUnit(this.client, state) };
  }

  /** In the batch's transaction: the state rests exactly as long as the events it came with. */
  keepReasoning(steps: readonly ReasoningStep[]): Promise<void> {
    return applyReasoningSteps(this.client, steps);
  }

  /** Written now, visible at commit; before the append, so the append lock is held only around the insert and the commit. */
  advance(partition: PartitionRef, nextOffset: Offset): Promise<void> {
    this.advanced.push({ partition, nextOffset });
    return advancePartitionOffset(this.client, partition, nextOffset);
  }

  /** Takes the global append lock (held until commit), allocates global positions and inserts. */
  async append(events: readonly OffsetEvent[]): Promise<AppendedEvents> {
    const positioned = events.map((m): PositionedEvent => {
      const streamPosition = this.streamPositions.get(m.event.eventId.toLowerCase());
      if (streamPosition === undefined)
        throw new AppError(ErrorCode.Internal, `event ${m.event.eventId} is appended without an open stream`);
      return { event: m.event, streamPosition, globalPosition: '', traceparent: m.traceparent };
    });
    await insertEvents(this.client, positioned);
    await this.tellProgress(positioned.at(-1)?.globalPosition);
    // Duplicates and erased conversations were dropped before: withoutRecorded, openStreams.
    return { written: positioned.map((p) => p.event), duplicates: 0, erased: 0 };
  }

  /**
   * After the read-model changes' notices, in the same transaction: delivered at commit, in that order. Each
   * partition is told the unit's last position: everything up to it commits at once.
   */
  private async tellProgress(lastPosition: string | undefined): Promise<void> {
    for (const { partition, nextOffset } of this.advanced) {
      await notifyRecordingProgress(this.client, {
        kind: 'recorded',
        consumerGroup: partition.consumerGroup,
        topic: partition.topic,
        partition: partition.partition,
        nextOffset: BigInt(nextOffset),
        ...(lastPosition === undefined ? {} : { position: BigInt(lastPosition) }),
      });
    }
  }
}

/** The live read model and the events table, in the batch's transaction. */
class PostgresReadModelInUnit implements ReadModelInUnit {
  constructor(
    private readonly client: PoolClient,
    readonly state: ReadModelState,
  ) {}

  async storedEvents(eventIds: readonly string[]): Promise<Array<{ event: StoredToolEvent; recordedAt: string }>> {
    const { rows } = await this.client.query<{ payload: StoredToolEvent; recordedAt: string }>(
      `SELECT payload, ${isoText('recorded_at')} AS "recordedAt" FROM events WHERE event_id = ANY($1::uuid[])`,
      [eventIds],
    );
    return rows.map((r) => ({ event: r.payload, recordedAt: r.recordedAt }));
  }

  async rewrite(event: StoredToolEvent): Promise<void> {
    await this.client.query('UPDATE events SET payload = $2 WHERE event_id = $1', [event.eventId, event]);
  }

  write(changes: ReadModelChanges): Promise<void> {
    return writeReadModelChanges(this.client, changes, 'events');
  }
}
