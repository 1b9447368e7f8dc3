/** One message of a partition batch, as the broker delivered it. */
export interface StreamMessage {
  offset: string;
  key: Buffer | null;
  value: Buffer | null;
  timestamp: string;
  /** Headers by name (the first value when repeated), as text. */
  headers: Readonly<Record<string, string | undefined>>;
}

export interface StreamBatch {
  topic: string;
  partition: number;
  /** Never empty. */
  messages: readonly StreamMessage[];
  firstOffset: string;
  lastOffset: string;
}

/** What a batch handler may do while it holds the batch. */
export interface BatchSession {
  /** Keeps the group membership alive during a long batch. */
  heartbeat(): Promise<void>;
  /** False once the consumer stops or the partition was reassigned: stop retrying. */
  isActive(): boolean;
  /** The batch is handled: the broker's own committed offset follows (for lag tooling; recording keeps its own). */
  done(): Promise<void>;
}

export interface ConsumerHandlers {
  batch(batch: StreamBatch, session: BatchSession): Promise<void>;
  /** The group gave this member these partitions (after every rebalance). */
  assigned(partitions: readonly number[]): void;
  crashed(error: Error, restarting: boolean): void;
}

export interface PartitionedConsumerOptions {
  groupId: string;
  topic: string;
  sessionTimeoutMs: number;
  partitionsConsumedConcurrently: number;
}

/**
 * A consumer-group member that hands partition batches to one handler: the
 * port the recorder consumes through, so the broker client's types stay in
 * this library.
 */
export interface PartitionedConsumer {
  start(handlers: ConsumerHandlers): Promise<void>;
  /** The next batch of this partition starts at `offset`. */
  seek(partition: number, offset: string): void;
  /** Waits for the batch in hand, then leaves the group. */
  stop(): Promise<void>;
}

export interface PartitionEnds {
  partition: number;
  /** The first offset still held. */
  low: string;
  /** The next offset to be written. */
  high: string;
}
