import { BeforeApplicationShutdown, Inject, Injectable, OnApplicationBootstrap } from '@nestjs/common';
import { Consumer, EachBatchPayload, Kafka, Partitioners, Producer } from 'kafkajs';
import type { Logger } from 'pino';
import type { AppConfig } from '@toolhistory/config';
import type { RecordingStore, RedactionPolicy } from '@toolhistory/domain';
import { ensureTopics, KafkaDeadLetterSink } from '@toolhistory/messaging';
import { APP_CONFIG, KAFKA, RECORDING_STORE, REDACTION_POLICY, ROOT_LOGGER } from '../tokens';
import { ErrorCode } from '@toolhistory/errors';
import { ATTEMPTS_PER_EVENT, RecordPartitionBatch } from './record-partition-batch';
import { retryWithBackoff } from './retry-with-backoff';

/**
 * The Kafka edge of recording: consumes partition batches and hands them to
 * RecordPartitionBatch. Resumes from the offsets committed in PostgreSQL;
 * the offsets it also commits to Kafka only serve lag monitoring.
 */
@Injectable()
export class KafkaRecorderConsumer implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private consumer?: Consumer;
  private producer?: Producer;
  private stopping = false;
  private readonly log: Logger;

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(KAFKA) private readonly kafka: Kafka,
    @Inject(RECORDING_STORE) private readonly store: RecordingStore,
    @Inject(REDACTION_POLICY) private readonly redaction: RedactionPolicy,
    @Inject(ROOT_LOGGER) rootLogger: Logger,
  ) {
    this.log = rootLogger.child({ component: 'recorder' });
  }

  async onApplicationBootstrap(): Promise<void> {
    const { kafka: k } = this.config;
    await ensureTopics(this.kafka, [
      { topic: k.topic, numPartitions: k.partitions, replicationFactor: k.replicationFactor },
      { topic: k.deadLetterTopic, numPartitions: k.partitions, replicationFactor: k.replicationFactor },
    ]);

    this.producer = this.kafka.producer({ allowAutoTopicCreation: false, createPartitioner: Partitioners.DefaultPartitioner });
    await this.producer.connect();
    const recordBatch = new RecordPartitionBatch(this.store, new KafkaDeadLetterSink(this.producer, k.deadLetterTopic), {
      consumerGroup: k.groupId,
      maxEventBytes: this.config.maxEventBytes,
      redaction: this.redaction,
    });

    const consumer = this.kafka.consumer({
      groupId: k.groupId,
      allowAutoTopicCreation: false,
      sessionTimeout: k.sessionTimeoutMs,
      heartbeatInterval: Math.max(500, Math.floor(k.sessionTimeoutMs / 10)),
      maxBytesPerPartition: 2 * 1024 * 1024,
      retry: { retries: Number.MAX_SAFE_INTEGER, initialRetryTime: 300, maxRetryTime: 10_000 },
    });
    this.consumer = consumer;
    consumer.on(consumer.events.GROUP_JOIN, ({ payload }) => {
      void this.seekToCommittedOffsets(consumer, payload.memberAssignment[k.topic] ?? []);
    });
    consumer.on(consumer.events.CRASH, ({ payload }) => {
      this.log.error({ err: payload.error, restart: payload.restart }, 'consumer crashed');
    });

    await consumer.connect();
    await consumer.subscribe({ topic: k.topic, fromBeginning: true });
    await consumer.run({
      autoCommit: true,
      eachBatchAutoResolve: false,
      partitionsConsumedConcurrently: k.partitionsConsumedConcurrently,
      eachBatch: (payload) => this.handleBatch(recordBatch, payload),
    });
    this.log.info({ topic: k.topic, groupId: k.groupId }, 'recorder started');
  }

  async beforeApplicationShutdown(): Promise<void> {
    this.stopping = true;
    // disconnect() waits for the batch in progress; its transaction commits or rolls back whole.
    await this.consumer?.disconnect();
    await this.producer?.disconnect();
    this.log.info('recorder stopped');
  }

  private async handleBatch(recordBatch: RecordPartitionBatch, payload: EachBatchPayload): Promise<void> {
    const { batch, heartbeat, isRunning, isStale, resolveOffset, commitOffsetsIfNecessary } = payload;
    if (batch.messages.length === 0) return;
    const started = Date.now();
    const outcome = await retryWithBackoff(
      () =>
        recordBatch.execute({
          topic: batch.topic,
          partition: batch.partition,
          messages: batch.messages.map((m) => ({ offset: m.offset, key: m.key, value: m.value, timestamp: m.timestamp })),
        }),
      {
        initialDelayMs: 200,
        maxDelayMs: 10_000,
        shouldContinue: () => !this.stopping && isRunning() && !isStale(),
        whileWaiting: heartbeat,
        // What reaches here is no one message's fault (those are set aside inside): an outage is
        // waited out, and anything else is retried too, loudly, rather than thrown to kafkajs,
        // which would restart its fetch loop on the same batch without end.
        shouldRetry: () => true,
        onRetry: (err, attempt, delayMs) => {
          const fields = {
            err: { code: err.code, message: err.message },
            attempt,
            delayMs,
            topic: batch.topic,
            partition: batch.partition,
          };
          if (err.code === ErrorCode.StorageUnavailable || err.code === ErrorCode.BrokerUnavailable) {
            this.log.warn(fields, 'recording failed; retrying the batch');
          } else {
            this.log.error(fields, 'recording fails for a reason that is no outage; retrying the batch');
          }
        },
      },
    );
    resolveOffset(batch.lastOffset());
    await commitOffsetsIfNecessary().catch((err) => this.log.warn({ err }, 'Kafka offset commit failed (PostgreSQL holds the position)'));
    this.log.debug({ partition: batch.partition, messages: batch.messages.length, ms: Date.now() - started, ...outcome }, 'batch recorded');
    if (outcome.deadLettered > 0) {
      this.log.warn({ partition: batch.partition, deadLettered: outcome.deadLettered }, 'poison messages dead-lettered');
    }
    for (const isolated of outcome.isolated) {
      this.log.error(
        { topic: batch.topic, partition: batch.partition, ...isolated },
        `a valid message failed to record ${ATTEMPTS_PER_EVENT} times while its neighbours recorded; dead-lettered, the partition moves on`,
      );
    }
    if (outcome.stubs > 0) {
      this.log.error(
        { partition: batch.partition, stubs: outcome.stubs },
        'dead letters refused by the broker; stubs with their origin and size were published instead',
      );
    }
  }

  private async seekToCommittedOffsets(consumer: Consumer, partitions: number[]): Promise<void> {
    const { topic, groupId } = this.config.kafka;
    try {
      const committed = await this.store.committedOffsets(groupId, topic);
      for (const partition of partitions) {
        const offset = committed.get(partition);
        if (offset !== undefined) consumer.seek({ topic, partition, offset });
      }
      this.log.info({ partitions, resumed: Object.fromEntries(committed) }, 'partitions assigned');
    } catch (err) {
      // Not fatal: the store skips anything below its committed offsets anyway.
      this.log.warn({ err }, 'could not read committed offsets on assignment');
    }
  }
}
