import type { Producer } from 'kafkajs';
import type { DeadLetter, DeadLetterSink } from '@toolhistory/domain';
import { AppError, ErrorCode } from '@toolhistory/errors';

export const DEAD_LETTER_HEADERS = {
  reason: 'dlq-reason',
  errorCode: 'dlq-error-code',
  originalTopic: 'dlq-original-topic',
  originalPartition: 'dlq-original-partition',
  originalOffset: 'dlq-original-offset',
  originalTimestamp: 'dlq-original-timestamp',
  deadLetteredAt: 'dlq-dead-lettered-at',
} as const;

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
          },
        })),
      });
    } catch (error) {
      throw new AppError(ErrorCode.BrokerUnavailable, `could not publish ${letters.length} dead letter(s) to ${this.topic}`, {
        retriable: true,
        cause: error,
      });
    }
  }
}
