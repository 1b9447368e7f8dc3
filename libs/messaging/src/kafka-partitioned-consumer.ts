import type { Consumer, Kafka } from 'kafkajs';
import { textHeaders } from './kafka-headers';
import type { ConsumerHandlers, PartitionedConsumer, PartitionedConsumerOptions, StreamMessage } from './partitioned-consumer.port';

/**
 * `PartitionedConsumer` on kafkajs: batches resolved by hand (a batch is
 * done only when its handler says so), the group's Kafka offsets committed
 * as they go, and the client's own retries kept going for as long as the
 * broker is away.
 */
export class KafkaPartitionedConsumer implements PartitionedConsumer {
  private consumer?: Consumer;

  constructor(
    private readonly kafka: Kafka,
    private readonly options: PartitionedConsumerOptions,
  ) {}

  async start(handlers: ConsumerHandlers): Promise<void> {
    const { groupId, topic, sessionTimeoutMs, partitionsConsumedConcurrently } = this.options;
    const consumer = this.kafka.consumer({
      groupId,
      allowAutoTopicCreation: false,
      sessionTimeout: sessionTimeoutMs,
      heartbeatInterval: Math.max(500, Math.floor(sessionTimeoutMs / 10)),
      maxBytesPerPartition: 2 * 1024 * 1024,
      retry: { retries: Number.MAX_SAFE_INTEGER, initialRetryTime: 300, maxRetryTime: 10_000 },
    });
    this.consumer = consumer;
    consumer.on(consumer.events.GROUP_JOIN, ({ payload }) => handlers.assigned(payload.memberAssignment[topic] ?? []));
    consumer.on(consumer.events.CRASH, ({ payload }) => handlers.crashed(payload.error, payload.restart));
    await consumer.connect();
    await consumer.subscribe({ topic, fromBeginning: true });
    await consumer.run({
      autoCommit: true,
      eachBatchAutoResolve: false,
      partitionsConsumedConcurrently,
      eachBatch: async ({ batch, resolveOffset, commitOffsetsIfNecessary, heartbeat, isRunning, isStale }) => {
        if (batch.messages.length === 0) return;
        const messages: StreamMessage[] = batch.messages.map((m) => ({
          offset: m.offset,
          key: m.key,
          value: m.value,
          timestamp: m.timestamp,
          headers: textHeaders(m.headers),
        }));
        await handlers.batch(
          {
            topic: batch.topic,
            partition: batch.partition,
            messages,
            firstOffset: batch.firstOffset() ?? messages[0].offset,
            lastOffset: batch.lastOffset(),
          },
          {
            heartbeat,
            isActive: () => isRunning() && !isStale(),
            done: async () => {
              resolveOffset(batch.lastOffset());
              await commitOffsetsIfNecessary();
            },
          },
        );
      },
    });
  }

  seek(partition: number, offset: string): void {
    this.consumer?.seek({ topic: this.options.topic, partition, offset });
  }

  async stop(): Promise<void> {
    await this.consumer?.disconnect();
  }
}
