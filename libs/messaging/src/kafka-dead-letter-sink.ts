import type { Producer } from 'kafkajs';
import type { DeadLetter, DeadLetterSink } from '@toolhistory/domain';
import { AppError, ErrorCode } from '@toolhistory/errors';
import { errorChain } from './error-chain';

export const DEAD_LETTER_HEADERS = {
  reason: 'dlq-reason',
  errorCode: 'dlq-error-code',
  originalTopic: 'dlq-original-topic',
  originalPartition: 'dlq-original-partition',
  originalOffset: 'dlq-original-offset',
  originalTimestamp: 'dlq-original-timestamp',
  deadLetteredAt: 'dlq-dead-lettered-at',
  stub: 'dlq-stub',
} as const;

/** Kafka's refusals of a record for what it is (its size, its form), which no retry changes. */
const REFUSALS_OF_THE_RECORD = new Set(['MESSAGE_TOO_LARGE', 'RECORD_LIST_TOO_LARGE', 'INVALID_RECORD', 'CORRUPT_MESSAGE']);

/** Dead letters keep the original key, so one conversation's letters stay in order. */
export class KafkaDeadLetterSink implements DeadLetterSink {
  constructor(
    private readonly producer: Producer,
    private readonly topic: string,
  ) {}

  async publish(letters: readonly DeadLetter[]): Promise<void> {
    if (letters.length === 0) return;
    const now = new Date().toISOString();
    try {
      await this.producer.send({
        topic: this.topic,
        acks: -1,
        messages: letters.map((l) => ({
          key: l.key,
          value: l.value,
          headers: {
            [DEAD_LETTER_HEADERS.reason]: l.reason,
            [DEAD_LETTER_HEADERS.errorCode]: l.errorCode,
            [DEAD_LETTER_HEADERS.originalTopic]: l.topic,
            [DEAD_LETTER_HEADERS.originalPartition]: String(l.partition),
            [DEAD_LETTER_HEADERS.originalOffset]: l.offset,
            [DEAD_LETTER_HEADERS.originalTimestamp]: l.timestamp,
            [DEAD_LETTER_HEADERS.deadLetteredAt]: now,
            ...(l.stub ? { [DEAD_LETTER_HEADERS.stub]: 'true' } : {}),
          },
        })),
      });
    } catch (error) {
      // A refusal of the record itself is final; anything else (an unreachable or busy broker) may pass.
      const type = errorChain(error).find((link) => link.type !== undefined)?.type;
      if (type !== undefined && REFUSALS_OF_THE_RECORD.has(type)) {
        throw new AppError(ErrorCode.BrokerRejected, `${this.topic} refused the dead letter (${type})`, { cause: error });
      }
      throw new AppError(ErrorCode.BrokerUnavailable, `could not publish ${letters.length} dead letter(s) to ${this.topic}`, {
        cause: error,
      });
    }
  }
}
