import { randomUUID } from 'node:crypto';
import type { IHeaders, Kafka, Producer } from 'kafkajs';
import type { DeadLetterTopic, StoredDeadLetter } from '@toolhistory/domain';
import { AppError, ErrorCode } from '@toolhistory/errors';
import { DEAD_LETTER_HEADERS } from './kafka-dead-letter-sink';
import { textHeaders } from './kafka-headers';

/** Marks a redriven message with the dead letter it came back from (`topic/partition/offset`). */
export const REDRIVEN_FROM_HEADER = 'dlq-redriven-from';

const READ_WITHIN_MS = 60_000;

/**
 * The dead-letter topic read back with a throw-away consumer group (kafkajs
 * has no assignment without a group), from each partition's start (or the
 * first letter at `since`) to its end as it was when the read began; the
 * group is deleted afterwards.
 */
export class KafkaDeadLetterTopic implements DeadLetterTopic {
  constructor(
    private readonly kafka: Kafka,
    readonly name: string,
    private readonly eventsTopic: string,
    private readonly producer?: Producer,
  ) {}

  async read(options: { since?: number } = {}): Promise<StoredDeadLetter[]> {
    const admin = this.kafka.admin();
    await admin.connect();
    const groupId = `toolhistory-cli-${randomUUID()}`;
    try {
      const ends = await admin.fetchTopicOffsets(this.name);
      const starts =
        options.since === undefined
          ? new Map(ends.map((e) => [e.partition, e.low]))
          : new Map((await admin.fetchTopicOffsetsByTimestamp(this.name, options.since)).map((s) => [s.partition, s.offset]));
      const remaining = new Map<number, bigint>();
      for (const { partition, high } of ends) {
        const start = BigInt(starts.get(partition) ?? high);
        if (start >= 0n && start < BigInt(high)) remaining.set(partition, BigInt(high) - 1n);
      }
      if (remaining.size === 0) return [];
      const letters = await this.consume(groupId, starts, remaining);
      return letters.sort((a, b) => a.partition - b.partition || (BigInt(a.offset) < BigInt(b.offset) ? -1 : 1));
    } finally {
      await admin.deleteGroups([groupId]).catch(() => undefined);
      await admin.disconnect();
    }
  }

  async republish(letter: StoredDeadLetter): Promise<void> {
    if (!this.producer) throw new Error('this dead-letter topic was opened to read only');
    if (letter.value === null)
      throw new AppError(
        ErrorCode.InvalidArgument,
        `dead letter ${letter.partition}:${letter.offset} is a stub: it has no value to publish`,
      );
    try {
      await this.producer.send({
        topic: this.eventsTopic,
        acks: -1,
        messages: [
          {
            key: letter.key,
            value: letter.value,
            headers: { [REDRIVEN_FROM_HEADER]: `${this.name}/${letter.partition}/${letter.offset}` },
          },
        ],
      });
    } catch (error) {
      throw new AppError(ErrorCode.BrokerUnavailable, `could not publish to ${this.eventsTopic}: ${(error as Error).message}`, {
        cause: error,
      });
    }
  }

  private async consume(groupId: string, starts: Map<number, string>, remaining: Map<number, bigint>): Promise<StoredDeadLetter[]> {
    const consumer = this.kafka.consumer({ groupId, allowAutoTopicCreation: false });
    const letters: StoredDeadLetter[] = [];
    await consumer.connect();
    try {
      await consumer.subscribe({ topic: this.name, fromBeginning: true });
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(
          () =>
            reject(new AppError(ErrorCode.BrokerUnavailable, `${this.name} was not read to its end within ${READ_WITHIN_MS / 1000} s`, {})),
          READ_WITHIN_MS,
        );
        consumer
          .run({
            autoCommit: false,
            eachMessage: async ({ partition, message }) => {
              const last = remaining.get(partition);
              // Before the seek takes effect the consumer may deliver from the partition's beginning.
              const before = BigInt(message.offset) < BigInt(starts.get(partition) ?? '0');
              if (last === undefined || before || BigInt(message.offset) > last) return;
              letters.push(this.letterOf(partition, message.offset, message.key, message.value, message.headers));
              if (BigInt(message.offset) === last) remaining.delete(partition);
              if (remaining.size === 0) {
                clearTimeout(timer);
                resolve();
              }
            },
          })
          .then(() => {
            for (const partition of remaining.keys()) consumer.seek({ topic: this.name, partition, offset: starts.get(partition)! });
          }, reject);
      });
    } finally {
      await consumer.disconnect();
    }
    return letters;
  }

  private letterOf(
    partition: number,
    offset: string,
    key: Buffer | null,
    value: Buffer | null,
    headers: IHeaders | undefined,
  ): StoredDeadLetter {
    const text = textHeaders(headers);
    const stub = text[DEAD_LETTER_HEADERS.stub] === 'true';
    return {
      topic: this.name,
      partition,
      offset,
      key: key === null ? null : key.toString(),
      value: stub ? null : value,
      errorCode: text[DEAD_LETTER_HEADERS.errorCode] ?? '',
      reason: text[DEAD_LETTER_HEADERS.reason] ?? '',
      original: {
        topic: text[DEAD_LETTER_HEADERS.originalTopic] ?? '',
        partition: Number(text[DEAD_LETTER_HEADERS.originalPartition] ?? ''),
        offset: text[DEAD_LETTER_HEADERS.originalOffset] ?? '',
        timestamp: text[DEAD_LETTER_HEADERS.originalTimestamp] ?? '',
      },
      deadLetteredAt: text[DEAD_LETTER_HEADERS.deadLetteredAt] ?? '',
      stub,
    };
  }
}
