import { parseToolEvent } from '@toolhistory/contract';
import {
  DeadLetter,
  DeadLetterSink,
  OffsetEvent,
  RecordBatchOutcome,
  RecordingStore,
  redactDeadLetterValue,
  redactReason,
} from '@toolhistory/domain';
import { AppError, ErrorCode } from '@toolhistory/errors';

export interface IncomingMessage {
  offset: string;
  key: Buffer | null;
  value: Buffer | null;
  timestamp: string;
}

export interface IncomingBatch {
  topic: string;
  partition: number;
  messages: readonly IncomingMessage[];
}

export interface BatchOutcome extends RecordBatchOutcome {
  deadLettered: number;
}

const NOTHING: BatchOutcome = Object.freeze({ appended: 0, duplicates: 0, alreadyCommitted: 0, erased: 0, deadLettered: 0 });

export interface RecordPartitionBatchOptions {
  consumerGroup: string;
  maxEventBytes: number;
}

const nextOffsetAfter = (offset: string): string => (BigInt(offset) + 1n).toString();

/**
 * One partition batch: validate each message, dead-letter the poison ones,
 * record the rest with the partition's next offset. A store error caused by
 * the data of one event (rare: it passed validation) falls back to one
 * event at a time, so only that event is dead-lettered.
 */
export class RecordPartitionBatch {
  constructor(
    private readonly store: RecordingStore,
    private readonly deadLetters: DeadLetterSink,
    private readonly options: RecordPartitionBatchOptions,
  ) {}

  async execute(batch: IncomingBatch): Promise<BatchOutcome> {
    if (batch.messages.length === 0) return { ...NOTHING };
    const valid: OffsetEvent[] = [];
    const letters: DeadLetter[] = [];
    for (const message of batch.messages) {
      const parsed = parseToolEvent(message.value, this.options.maxEventBytes);
      if (parsed.ok) valid.push({ offset: message.offset, event: parsed.event });
      else letters.push(this.letter(batch, message, parsed.error));
    }
    await this.deadLetters.publish(letters);

    const nextOffset = nextOffsetAfter(batch.messages[batch.messages.length - 1].offset);
    try {
      const outcome = await this.store.recordBatch({ ...this.partitionRef(batch), events: valid, nextOffset });
      return { ...outcome, deadLettered: letters.length };
    } catch (error) {
      if (error instanceof AppError && error.code === ErrorCode.UnstorableEvent) {
        const outcome = await this.recordOneByOne(batch, valid, nextOffset);
        return { ...outcome, deadLettered: outcome.deadLettered + letters.length };
      }
      throw error;
    }
  }

  private async recordOneByOne(batch: IncomingBatch, valid: readonly OffsetEvent[], nextOffset: string): Promise<BatchOutcome> {
    const total: BatchOutcome = { ...NOTHING };
    const byOffset = new Map(batch.messages.map((m) => [m.offset, m]));
    for (const item of valid) {
      const ref = { ...this.partitionRef(batch), nextOffset: nextOffsetAfter(item.offset) };
      try {
        const outcome = await this.store.recordBatch({ ...ref, events: [item] });
        total.appended += outcome.appended;
        total.duplicates += outcome.duplicates;
        total.alreadyCommitted += outcome.alreadyCommitted;
        total.erased += outcome.erased;
      } catch (error) {
        if (!(error instanceof AppError) || error.code !== ErrorCode.UnstorableEvent) throw error;
        await this.deadLetters.publish([this.letter(batch, byOffset.get(item.offset)!, error)]);
        await this.store.recordBatch({ ...ref, events: [] });
        total.deadLettered += 1;
      }
    }
    await this.store.recordBatch({ ...this.partitionRef(batch), events: [], nextOffset });
    return total;
  }

  private partitionRef(batch: IncomingBatch) {
    return { consumerGroup: this.options.consumerGroup, topic: batch.topic, partition: batch.partition };
  }

  /** Dead letters rest in Kafka, so they are redacted too (see redactDeadLetterValue). */
  private letter(batch: IncomingBatch, message: IncomingMessage, error: AppError): DeadLetter {
    return {
      topic: batch.topic,
      partition: batch.partition,
      offset: message.offset,
      key: message.key,
      value: redactDeadLetterValue(message.value),
      timestamp: message.timestamp,
      errorCode: error.code,
      reason: redactReason(error.message),
    };
  }
}
