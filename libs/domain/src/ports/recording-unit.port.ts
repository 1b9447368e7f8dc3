import type { StoredToolEvent } from '@toolhistory/contract';
import type { ReadModelChanges, ReadModelState } from '../projection/evolve-read-model';
import type { RecordedToolNames } from '../redaction/redact-batch';
import type { ReasoningStep } from '../reasoning/reasoning-apart';
import type { Offset, OffsetEvent, PartitionRef } from './recording-store.port';
import type { GlobalPosition } from './event-store.port';

/** The batch's events left once those of erased conversations are dropped. */
export interface OpenedStreams {
  /** In batch order. */
  open: OffsetEvent[];
  /** Events dropped because their conversation is erased (its tombstone found). */
  erased: number;
}

/**
 * The read model when it is written in the same unit as the events
 * (PostgreSQL): the rows the batch touches, read under the unit's locks,
 * and the writes that keep them and the stored events in step.
 */
export interface ReadModelInUnit {
  /** The current rows of every key the batch touches. */
  readonly state: ReadModelState;
  /** Stored events by eventId (lower case), each in the schema version it is stored in, with when it was recorded. */
  storedEvents(eventIds: readonly string[]): Promise<Array<{ event: StoredToolEvent; recordedAt: string }>>;
  /** Replaces a stored event's payload (the re-redaction of a result recorded before its call). */
  rewrite(event: StoredToolEvent): Promise<void>;
  /** Writes the rows the projection changed. */
  write(changes: ReadModelChanges): Promise<void>;
}

/** What the store knew before the batch, as far as redacting and projecting it needs. */
export interface RecordedBefore {
  /** Where the tools of the batch's results whose call came in an earlier batch are named. */
  toolNames: RecordedToolNames;
  /**
   * Present when the read model is written in the same unit (PostgreSQL);
   * absent when it follows the store through the projector (EventStoreDB).
   */
  readModel?: ReadModelInUnit;
}

/** What the append did with the batch's (redacted) events. */
export interface AppendedEvents {
  /** The events written now, as stored. */
  written: StoredToolEvent[];
  /** Events found recorded already on append (a store that dedupes as it appends); 0 when `withoutRecorded` dropped them. */
  duplicates: number;
  /** Events of erased conversations found on append; 0 when `openStreams` dropped them. */
  erased: number;
}

/**
 * The steps of recording partition batches that differ per store, each
 * small, run in this order by the recording service (recording/record-batch.ts),
 * which holds the rules. A unit records one batch of each of its
 * partitions (one or several: recording/grouped-recording.ts).
 */
export interface RecordingUnit {
  /** A partition's stored next offset (NO_STORED_OFFSET when none); held for the unit where the store can lock it. */
  storedOffset(partition: PartitionRef): Promise<bigint>;
  /** The events whose eventId is not recorded yet, repeats within the batch dropped. */
  withoutRecorded(events: readonly OffsetEvent[]): Promise<OffsetEvent[]>;
  /** Claims the batch's conversations for the unit and drops the events of erased ones. */
  openStreams(events: readonly OffsetEvent[]): Promise<OpenedStreams>;
  /** What redaction (and, with a read model in the unit, projection) needs to know of what was recorded before. */
  recordedBefore(events: readonly StoredToolEvent[]): Promise<RecordedBefore>;
  /** Keeps the batch's reasoning state apart from its events, and lets go of what the steps say (reasoning-apart.ts), in order. */
  keepReasoning(steps: readonly ReasoningStep[]): Promise<void>;
  /** Moves a partition's next offset, with effect when the unit completes and never ahead of its appends. */
  advance(partition: PartitionRef, nextOffset: Offset): Promise<void>;
  /** Appends the redacted events, each with its trace context. */
  append(events: readonly OffsetEvent[]): Promise<AppendedEvents>;
}

/** Where recording happens: units of work, and the offsets they left. */
export interface RecordingStorage {
  /**
   * Runs `work` as one unit for the partitions (each named once): all of it
   * takes effect or (where the store has transactions) none; where it has
   * none, a repeat of the unit is harmless (appends are idempotent, the
   * offsets move last).
   */
  inUnitOfWork<T>(partitions: readonly PartitionRef[], work: (unit: RecordingUnit) => Promise<T>): Promise<T>;
  committedOffsets(consumerGroup: string, topic: string): Promise<Map<number, Offset>>;
}

/** Where the recorder resumes, kept beside the read model when the events live elsewhere. */
export interface ConsumerOffsets {
  committed(consumerGroup: string, topic: string): Promise<Map<number, Offset>>;
  /**
   * Moves the partition's next offset forward; never back. `position`: the
   * last global position the batch appended, kept with it for readers that
   * wait for the read model to pass their events.
   */
  advance(partition: PartitionRef, nextOffset: Offset, position?: GlobalPosition): Promise<void>;
}
