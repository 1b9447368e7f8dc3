import { BeforeApplicationShutdown, Inject, Injectable, OnApplicationBootstrap } from '@nestjs/common';
import type { Logger } from 'pino';
import type { AppConfig } from '@toolhistory/config';
import { isOffsetGap, type RecordingStore, type RedactionPolicy } from '@toolhistory/domain';
import type { BatchSession, Closable, KafkaMessaging, PartitionedConsumer, StreamBatch } from '@toolhistory/messaging';
import type { DeadLetterSink } from '@toolhistory/domain';
import { APP_CONFIG, MESSAGING, METRICS, RECORDING_STORE, REDACTION_POLICY, ROOT_LOGGER } from '../tokens';
import type { ServiceMetrics } from '../observability/service-metrics';
import { inBatchSpan, traceparentOf } from './batch-trace';
import { ConsumerLag } from './consumer-lag';
import { AppError, ErrorCode } from '@toolhistory/errors';
import { ATTEMPTS_PER_EVENT } from './attempt-alone';
import { type BatchOutcome, type IncomingBatch, RecordPartitionBatch } from './record-partition-batch';
import { RecordingActivity } from './recording-activity';
import { retryWithBackoff } from './retry-with-backoff';

/**
 * The broker edge of recording: consumes partition batches (through the
 * messaging port) and hands them to RecordPartitionBatch. Resumes from the
 * offsets committed in PostgreSQL; the offsets it also commits to the
 * broker only serve lag tooling.
 */
@Injectable()
export class KafkaRecorderConsumer implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private consumer?: PartitionedConsumer;
  private deadLetters?: Closable<DeadLetterSink>;
  private stopping = false;
  /** Partitions whose position was checked against PostgreSQL since the last assignment. */
  private readonly positioned = new Set<number>();
  private readonly log: Logger;
  private readonly lag: ConsumerLag;

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(MESSAGING) private readonly messaging: KafkaMessaging,
    @Inject(RECORDING_STORE) private readonly store: RecordingStore,
    @Inject(REDACTION_POLICY) private readonly redaction: RedactionPolicy,
    @Inject(ROOT_LOGGER) rootLogger: Logger,
    private readonly activity: RecordingActivity,
    @Inject(METRICS) private readonly metrics: ServiceMetrics,
  ) {
    this.log = rootLogger.child({ component: 'recorder' });
    this.lag = new ConsumerLag(messaging, store, config.kafka.groupId, config.kafka.topic);
    metrics.observeConsumerLag(() => this.lag.read());
  }

  async onApplicationBootstrap(): Promise<void> {
    const { kafka: k } = this.config;
    await this.messaging.ensureTopics([
      { topic: k.topic, numPartitions: k.partitions, replicationFactor: k.replicationFactor },
      { topic: k.deadLetterTopic, numPartitions: k.partitions, replicationFactor: k.replicationFactor },
    ]);
    this.deadLetters = await this.messaging.deadLetterSink(k.deadLetterTopic);
    const recordBatch = new RecordPartitionBatch(this.store, this.deadLetters.value, {
      consumerGroup: k.groupId,
      maxEventBytes: this.config.maxEventBytes,
      redaction: this.redaction,
    });
    this.consumer = this.messaging.consumer({
      groupId: k.groupId,
      topic: k.topic,
      sessionTimeoutMs: k.sessionTimeoutMs,
      partitionsConsumedConcurrently: k.partitionsConsumedConcurrently,
    });
    await this.consumer.start({
      batch: (batch, session) => this.handleBatch(recordBatch, batch, session),
      assigned: (partitions) => {
        // A new assignment: every partition is positioned again before its first batch is recorded
        // (checked per batch), and sent to its start now, for partitions where no batch would come
        // (the group's broker offsets already at the end).
        this.positioned.clear();
        this.log.info({ partitions }, 'partitions assigned');
        void this.seekToStart(partitions);
      },
      crashed: (err, restart) => this.log.error({ err, restart }, 'consumer crashed'),
    });
    this.log.info({ topic: k.topic, groupId: k.groupId }, 'recorder started');
  }

  async beforeApplicationShutdown(): Promise<void> {
    this.stopping = true;
    // stop() waits for the batch in progress; its transaction commits or rolls back whole.
    await this.consumer?.stop();
    await this.deadLetters?.close();
    this.log.info('recorder stopped');
  }

  private async handleBatch(recordBatch: RecordPartitionBatch, batch: StreamBatch, session: BatchSession): Promise<void> {
    if (!(await this.isPositioned(batch.partition, batch.firstOffset))) return;
    const started = Date.now();
    const timed = this.metrics.batches.startTimer();
    let outcome;
    try {
      this.activity.begin();
      outcome = await this.recordWithRetries(recordBatch, batch, session).finally(() => this.activity.end());
    } catch (error) {
      timed({ outcome: 'failed' });
      throw error;
    }
    if (isOffsetGap(outcome)) {
      timed({ outcome: 'failed' });
      this.log.warn(
        { partition: batch.partition, firstOffset: batch.firstOffset, resumeAt: outcome.resumeAt },
        'batch beyond the recorded offset; going back',
      );
      this.consumer?.seek(batch.partition, outcome.resumeAt);
      return;
    }
    timed({ outcome: 'recorded' });
    this.metrics.recordedBatch(outcome.recorded, outcome.duplicates, outcome.deadLetterCodes);
    await session.done().catch((err) => this.log.warn({ err }, 'broker offset commit failed (PostgreSQL holds the position)'));
    this.logOutcome(batch, started, outcome);
  }

  /**
   * A partition's first batch after an assignment must start where
   * PostgreSQL says recording stopped, or at the partition's beginning when
   * PostgreSQL has no offset for it (a fresh database beside a group whose
   * Kafka offsets are far ahead): otherwise the consumer is sent there and
   * nothing is recorded from the batch in hand.
   */
  private async isPositioned(partition: number, firstOffset: string): Promise<boolean> {
    if (this.positioned.has(partition)) return true;
    const { topic, groupId } = this.config.kafka;
    const start = await retryWithBackoff(async () => (await this.startOffsets(groupId, topic, [partition])).get(partition)!, {
      initialDelayMs: 200,
      maxDelayMs: 10_000,
      shouldContinue: () => !this.stopping,
      shouldRetry: () => true,
      onRetry: (err, attempt) =>
        this.log.warn({ err: { code: err.code, message: err.message }, attempt, partition }, 'cannot read where to start'),
    });
    if (BigInt(firstOffset) > BigInt(start)) {
      this.log.info({ partition, from: start, fetchedFrom: firstOffset }, 'starting the partition where recording stopped');
      this.consumer?.seek(partition, start);
      return false;
    }
    this.positioned.add(partition);
    return true;
  }

  private async seekToStart(partitions: readonly number[]): Promise<void> {
    const { topic, groupId } = this.config.kafka;
    try {
      for (const [partition, offset] of await this.startOffsets(groupId, topic, partitions)) this.consumer?.seek(partition, offset);
    } catch (err) {
      // The per-batch check still positions each partition once a batch arrives.
      this.log.warn({ err: { message: (err as Error).message }, partitions }, 'could not position the partitions on assignment');
    }
  }

  /** Where each partition starts: PostgreSQL's offset, else the partition's beginning (asked of the broker only when needed). */
  private async startOffsets(groupId: string, topic: string, partitions: readonly number[]): Promise<Map<number, string>> {
    const stored = await this.store.committedOffsets(groupId, topic);
    const starts = new Map<number, string>();
    const unknown = partitions.filter((p) => {
      const offset = stored.get(p);
      if (offset !== undefined) starts.set(p, offset);
      return offset === undefined;
    });
    if (unknown.length === 0) return starts;
    const offsets = await this.messaging.partitionEnds(topic).catch((error: Error) => {
      throw new AppError(ErrorCode.BrokerUnavailable, `no offsets for ${topic}: ${error.message}`, { cause: error });
    });
    for (const partition of unknown) {
      const low = offsets.find((o) => o.partition === partition)?.low;
      if (low === undefined) throw new AppError(ErrorCode.BrokerUnavailable, `no offsets for partition ${partition} of ${topic}`);
      starts.set(partition, low);
    }
    return starts;
  }

  private recordWithRetries(recordBatch: RecordPartitionBatch, batch: StreamBatch, session: BatchSession) {
    const incoming: IncomingBatch = {
      topic: batch.topic,
      partition: batch.partition,
      messages: batch.messages.map((m) => ({
        offset: m.offset,
        key: m.key,
        value: m.value,
        timestamp: m.timestamp,
        traceparent: traceparentOf(m.headers.traceparent),
      })),
    };
    // One span for the batch, retries included: it continues the producers' traces.
    return inBatchSpan(incoming, () => this.retrying(recordBatch, incoming, session));
  }

  private retrying(recordBatch: RecordPartitionBatch, incoming: IncomingBatch, session: BatchSession) {
    return retryWithBackoff(() => recordBatch.execute(incoming), {
      initialDelayMs: 200,
      maxDelayMs: 10_000,
      shouldContinue: () => !this.stopping && session.isActive(),
      whileWaiting: () => session.heartbeat(),
      // What reaches here is no one message's fault (those are set aside inside): an outage is
      // waited out, and anything else is retried too, loudly, rather than thrown to kafkajs,
      // which would restart its fetch loop on the same batch without end. (A gap is an outcome, not
      // a failure: the consumer goes back to where recording stopped.)
      shouldRetry: () => true,
      onRetry: (err, attempt, delayMs) => {
        this.metrics.batchRetries.inc({ code: err.code });
        const fields = {
          err: { code: err.code, message: err.message },
          attempt,
          delayMs,
          topic: incoming.topic,
          partition: incoming.partition,
        };
        if (err.code === ErrorCode.StorageUnavailable || err.code === ErrorCode.BrokerUnavailable) {
          this.log.warn(fields, 'recording failed; retrying the batch');
        } else {
          this.log.error(fields, 'recording fails for a reason that is no outage; retrying the batch');
        }
      },
    });
  }

  private logOutcome(batch: StreamBatch, started: number, outcome: BatchOutcome): void {
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
}
