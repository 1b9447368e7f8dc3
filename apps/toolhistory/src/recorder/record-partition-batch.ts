import { parseToolEvent, type ParseResult } from '@toolhistory/contract';
import {
  addSummary,
  type DeadLetter,
  emptySummary,
  type DeadLetterSink,
  DEFAULT_REDACTION_POLICY,
  isOffsetGap,
  type OffsetEvent,
  type OffsetGap,
  type RecordBatchCommand,
  type RecordBatchOutcome,
  type RecordingStore,
  redactDeadLetterValue,
  type RedactionPolicy,
  redactReason,
} from '@toolhistory/domain';
import { AppError, ErrorCode, toAppError } from '@toolhistory/errors';
import { narrowDownFailures } from './narrow-down-failures';

export interface IncomingMessage {
  offset: string;
  key: Buffer | null;
  value: Buffer | null;
  timestamp: string;
  /** The producer's W3C trace context, when it sent a well-formed one. */
  traceparent?: string;
}

export interface IncomingBatch {
  topic: string;
  partition: number;
  messages: readonly IncomingMessage[];
}

/** A message set aside because recording it failed again and again while its neighbours recorded. */
export interface IsolatedMessage {
  offset: string;
  errorCode: ErrorCode;
  reason: string;
}

export interface BatchOutcome extends RecordBatchOutcome {
  deadLettered: number;
  /** Each dead letter's error code. */
  deadLetterCodes: ErrorCode[];
  /** Valid messages that could not be recorded (as opposed to invalid ones): each is worth an error line. */
  isolated: IsolatedMessage[];
  /** Dead letters the broker refused whole, published as a stub instead. */
  stubs: number;
}

const nothing = (): BatchOutcome => ({
  appended: 0,
  duplicates: 0,
  alreadyCommitted: 0,
  erased: 0,
  recorded: emptySummary(),
  deadLettered: 0,
  deadLetterCodes: [],
  isolated: [],
  stubs: 0,
});

export interface RecordPartitionBatchOptions {
  consumerGroup: string;
  maxEventBytes: number;
  /** Applied to dead letters too, so a masked field or a `persist: none` payload does not rest raw in the dead-letter topic. */
  redaction?: RedactionPolicy;
}

/** A reason travels in a header, which counts towards the broker's message size. */
const MAX_REASON_CHARS = 2_000;

const nextOffsetAfter = (offset: string): string => (BigInt(offset) + 1n).toString();

/**
 * One partition batch: validate each message, dead-letter the poison ones,
 * record the rest with the partition's next offset.
 *
 * Failures are retried only while they may pass. A retriable one (the
 * database or broker is unreachable, or refuses whatever the data) goes to
 * the caller, which retries the batch for as long as it takes: nothing is
 * dead-lettered for an outage. Any other failure is narrowed down to its
 * message: each event is then recorded alone, up to three times; one that
 * still fails, while recording without it succeeds, is dead-lettered with
 * its reason and the partition moves on.
 */
export class RecordPartitionBatch {
  private readonly redaction: RedactionPolicy;

  constructor(
    private readonly store: RecordingStore,
    private readonly deadLetters: DeadLetterSink,
    private readonly options: RecordPartitionBatchOptions,
  ) {
    this.redaction = options.redaction ?? DEFAULT_REDACTION_POLICY;
  }

  /** The batch's outcome, or the gap when it starts beyond where recording stopped (nothing recorded then). */
  async execute(batch: IncomingBatch): Promise<BatchOutcome | OffsetGap> {
    if (batch.messages.length === 0) return nothing();
    const outcome = nothing();
    const valid: OffsetEvent[] = [];
    const letters: DeadLetter[] = [];
    for (const message of batch.messages) {
      const parsed = this.parse(message);
      if (parsed.ok) valid.push({ offset: message.offset, event: parsed.event, traceparent: message.traceparent });
      else letters.push(this.letter(batch, message, parsed.error));
    }
    await this.leaveOutRedelivered(batch, letters);
    outcome.stubs += await this.publish(letters);
    outcome.deadLettered += letters.length;
    outcome.deadLetterCodes.push(...letters.map((l) => l.errorCode));

    const nextOffset = nextOffsetAfter(batch.messages[batch.messages.length - 1].offset);
    const partition = this.partitionRef(batch);
    const recorded = await narrowDownFailures(
      valid,
      () => this.store.recordBatch({ ...partition, events: valid, nextOffset, firstOffset: batch.messages[0].offset }),
      async (item) =>
        add(outcome, await this.recordAfterTheGapCheck({ ...partition, events: [item], nextOffset: nextOffsetAfter(item.offset) })),
      (item, failure) => this.deadLetter(batch, item, failure, outcome),
    );
    if (!recorded.whole) {
      // One by one, the offset moved to each valid event's; now past the batch's last message, poison ones included.
      await this.recordAfterTheGapCheck({ ...partition, events: [], nextOffset });
      return outcome;
    }
    if (isOffsetGap(recorded.result)) return recorded.result;
    add(outcome, recorded.result);
    return outcome;
  }

  /**
   * A batch delivered again (after a rebalance, or the seek to where
   * recording stopped) holds poison messages that were dead-lettered the
   * first time: those below the partition's recorded offset go nowhere
   * again. Asked of the store only when there are letters.
   */
  private async leaveOutRedelivered(batch: IncomingBatch, letters: DeadLetter[]): Promise<void> {
    if (letters.length === 0) return;
    const committed = (await this.store.committedOffsets(this.options.consumerGroup, batch.topic)).get(batch.partition);
    if (committed === undefined) return;
    const fresh = letters.filter((l) => BigInt(l.offset) >= BigInt(committed));
    letters.splice(0, letters.length, ...fresh);
  }

  private parse(message: IncomingMessage): ParseResult {
    try {
      return parseToolEvent(message.value, this.options.maxEventBytes);
    } catch (error) {
      // The parser must not throw; if it does, this message is what makes it.
      return { ok: false, error: new AppError(ErrorCode.Internal, `validation failed: ${(error as Error).message}`, { cause: error }) };
    }
  }

  /**
   * Sets aside an event that fails alone while its neighbours record: once
   * recording without it is shown to work, it is dead-lettered with its
   * reason and the partition's offset moves past it.
   */
  private async deadLetter(batch: IncomingBatch, item: OffsetEvent, failure: AppError, outcome: BatchOutcome): Promise<void> {
    await this.proveTheEventIsTheCause(batch, item.offset, failure);
    const message = batch.messages.find((m) => m.offset === item.offset)!;
    outcome.stubs += await this.publish([this.letter(batch, message, failure)]);
    await this.recordAfterTheGapCheck({ ...this.partitionRef(batch), events: [], nextOffset: nextOffsetAfter(item.offset) });
    outcome.deadLettered += 1;
    outcome.deadLetterCodes.push(failure.code);
    outcome.isolated.push({
      offset: item.offset,
      errorCode: failure.code,
      reason: redactReason(failure.message).slice(0, MAX_REASON_CHARS),
    });
  }

  /**
   * Records nothing at the event's own offset: if even that fails, the
   * store is what fails (a schema gone missing, a full disk), and setting
   * events aside would lose them all; the batch is retried instead.
   */
  private async proveTheEventIsTheCause(batch: IncomingBatch, offset: string, failure: AppError): Promise<void> {
    try {
      await this.recordAfterTheGapCheck({ ...this.partitionRef(batch), events: [], nextOffset: offset });
    } catch (thrown) {
      throw new AppError(ErrorCode.StorageUnavailable, `recording fails whatever the event (${failure.message})`, {
        cause: thrown,
      });
    }
  }

  /**
   * Publishes the letters; a letter the broker refuses for itself (too
   * large, say) goes as a stub: key, headers and a note of its size, so the
   * partition can move on and the letter's origin is still known. Returns
   * how many stubs were sent. A stub refused too means the dead-letter topic
   * itself is unusable: that is retried, loudly, rather than losing the
   * message.
   */
  private async publish(letters: readonly DeadLetter[]): Promise<number> {
    if (letters.length === 0) return 0;
    try {
      await this.deadLetters.publish(letters);
      return 0;
    } catch (thrown) {
      const error = toAppError(thrown);
      if (error.retriable) throw error;
    }
    let stubs = 0;
    for (const letter of letters) {
      try {
        await this.deadLetters.publish([letter]);
      } catch (thrown) {
        const error = toAppError(thrown);
        if (error.retriable) throw error;
        try {
          await this.deadLetters.publish([stubOf(letter, error)]);
        } catch (stubFailure) {
          throw new AppError(
            ErrorCode.BrokerUnavailable,
            `the dead-letter topic refuses even a stub letter: ${(stubFailure as Error).message}`,
            {
              cause: stubFailure,
            },
          );
        }
        stubs += 1;
      }
    }
    return stubs;
  }

  /** Records what follows the batch's first write, which passed the gap check: without a first offset, no gap can be answered. */
  private async recordAfterTheGapCheck(command: Omit<RecordBatchCommand, 'firstOffset'>): Promise<RecordBatchOutcome> {
    const recorded = await this.store.recordBatch(command);
    if (isOffsetGap(recorded)) throw new AppError(ErrorCode.Internal, `a store answered a gap for a write without a first offset`);
    return recorded;
  }

  private partitionRef(batch: IncomingBatch) {
    return { consumerGroup: this.options.consumerGroup, topic: batch.topic, partition: batch.partition };
  }

  /** Dead letters rest in Kafka, so they are redacted too (see redactDeadLetterValue). */
  private letter(batch: IncomingBatch, message: IncomingMessage, error: AppError): DeadLetter {
    let value: Buffer | null;
    try {
      value = redactDeadLetterValue(message.value, this.redaction);
    } catch {
      value = Buffer.from(JSON.stringify({ unredactable: true, originalBytes: message.value?.length ?? 0 }));
    }
    return {
      topic: batch.topic,
      partition: batch.partition,
      offset: message.offset,
      key: message.key,
      value,
      timestamp: message.timestamp,
      errorCode: error.code,
      reason: redactReason(error.message).slice(0, MAX_REASON_CHARS),
    };
  }
}

/** What is left of a letter the broker would not take: where it came from, why, and how big it was. */
function stubOf(letter: DeadLetter, refusal: AppError): DeadLetter {
  return {
    ...letter,
    key: letter.key && letter.key.length <= 1_024 ? letter.key : null,
    value: Buffer.from(
      JSON.stringify({ deadLetterStub: true, originalBytes: letter.value?.length ?? 0, refused: refusal.message.slice(0, 500) }),
    ),
    reason: letter.reason.slice(0, 500),
    stub: true,
  };
}

function add(total: BatchOutcome, outcome: RecordBatchOutcome): void {
  total.appended += outcome.appended;
  total.duplicates += outcome.duplicates;
  total.alreadyCommitted += outcome.alreadyCommitted;
  total.erased += outcome.erased;
  addSummary(total.recorded, outcome.recorded);
}
