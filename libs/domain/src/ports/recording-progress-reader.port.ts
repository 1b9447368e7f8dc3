import type { ToolEventType } from '@toolhistory/contract';

/** Where recording stands, read from the database when the change feed has not told it (yet). */
export interface RecordingProgressReader {
  /**
   * The recorder's next offset of the partition for the consumer group, and
   * the last global position recorded with it where the store keeps it;
   * null when nothing of the partition was recorded yet.
   */
  recordedOffset(
    consumerGroup: string,
    topic: string,
    partition: number,
    signal?: AbortSignal,
  ): Promise<{ nextOffset: bigint; position?: bigint } | null>;
  /** The last global position appended to the event store (0: none). */
  lastPosition(signal?: AbortSignal): Promise<bigint>;
  /** The last global position at or before `atMost` of an event of these types (0: none). */
  lastPositionOf(types: readonly ToolEventType[], atMost: bigint, signal?: AbortSignal): Promise<bigint>;
  /** A projection's checkpoint (0: nothing applied). */
  checkpoint(projection: string, signal?: AbortSignal): Promise<bigint>;
}
