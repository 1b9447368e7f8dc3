import type { RecordedSummary } from '../recording/recorded-summary';
import type { StoredToolEvent } from '@toolhistory/contract';

/** Kafka offsets are int64; they travel as decimal strings, as kafkajs gives them. */
export type Offset = string;

export interface PartitionRef {
  consumerGroup: string;
  topic: string;
  partition: number;
}

export interface OffsetEvent {
  offset: Offset;
  /**
   * As received, in the schema version it was published in: it is stored in
   * that version, and the store upcasts it before applying any rule.
   */
  event: StoredToolEvent;
  /**
   * The W3C trace context the producer sent with the message, if any: kept
   * with the recorded event (never in its payload), so an audit listing can
   * name the trace that made each invocation.
   */
  traceparent?: string;
}

export interface RecordBatchCommand extends PartitionRef {
  /** Valid events in partition order. Poison messages are absent: they were dead-lettered. */
  events: readonly OffsetEvent[];
  /** The offset to resume from once this batch is committed (last offset + 1). */
  nextOffset: Offset;
  /**
   * The offset of the batch's first message, poison ones included. When it
   * lies beyond the stored next offset, messages in between were never
   * recorded: the store answers an OffsetGap instead of recording across
   * the gap.
   */
  firstOffset?: Offset;
}

export interface RecordBatchOutcome {
  appended: number;
  /** Events whose eventId was already recorded (producer retries, replays). */
  duplicates: number;
  /** Messages below the committed offset (redelivered after a rebalance or crash). */
  alreadyCommitted: number;
  /** Events of erased conversations, dropped so an erasure stays final. */
  erased: number;
  /** The appended events by type, and the redactions applied to them. */
  recorded: RecordedSummary;
}

/**
 * The batch starts beyond the partition's stored next offset: the messages
 * in between were never recorded. Nothing is recorded; the consumer goes
 * back to `resumeAt`. An outcome of recording, not a failure.
 */
export interface OffsetGap {
  kind: 'gap';
  resumeAt: Offset;
}

/**
 * Records a batch atomically: the new events, the read-model update they
 * imply and the consumer's next offset commit together or not at all. A
 * batch that starts beyond the stored offset records nothing and answers
 * the gap (recording/partition-offset.ts).
 */
export interface RecordingStore {
  recordBatch(command: RecordBatchCommand): Promise<RecordBatchOutcome | OffsetGap>;
  committedOffsets(consumerGroup: string, topic: string): Promise<Map<number, Offset>>;
}
