import { type Admin, type Kafka, Partitioners, type Producer } from 'kafkajs';
import type { DeadLetterSink } from '@toolhistory/domain';
import { verifyBrokerAccess } from './broker-access';
import { ensureTopics, type TopicSpec } from './ensure-topics';
import { createKafka, type KafkaClientSettings, type KafkaLog } from './kafka-client';
import { KafkaDeadLetterSink } from './kafka-dead-letter-sink';
import { KafkaDeadLetterTopic } from './kafka-dead-letter-topic';
import { KafkaPartitionedConsumer } from './kafka-partitioned-consumer';
import type { PartitionedConsumer, PartitionedConsumerOptions, PartitionEnds } from './partitioned-consumer.port';

const within = <T>(work: Promise<T>, ms: number): Promise<T> =>
  Promise.race([work, new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms).unref())]);

/** A producer's handle: what it sends through, and how to let it go. */
export interface Closable<T> {
  value: T;
  close(): Promise<void>;
}

/**
 * Everything the service asks of the broker, on one kafkajs client: the
 * app sees these operations and the `PartitionedConsumer` port, never the
 * client's types. One admin connection is shared by the questions asked
 * often (health, offsets, lag) and opened again after a failure.
 */
export class KafkaMessaging {
  private admin?: Promise<Admin>;

  private constructor(
    private readonly kafka: Kafka,
    private readonly settings: KafkaClientSettings,
  ) {}

  static create(settings: KafkaClientSettings, log: KafkaLog, options: { retries?: number } = {}): KafkaMessaging {
    return new KafkaMessaging(createKafka(settings, log, options), settings);
  }

  /** Wrong credentials or an untrusted certificate: INVALID_CONFIG naming the setting; no answer: BROKER_UNAVAILABLE. */
  verifyAccess(): Promise<void> {
    return verifyBrokerAccess(this.kafka, this.settings);
  }

  ensureTopics(topics: readonly TopicSpec[]): Promise<void> {
    return ensureTopics(this.kafka, topics);
  }

  /** Whether the cluster answers within `ms`. */
  async answers(ms: number): Promise<boolean> {
    try {
      await within(
        this.asking(ms).then((admin) => admin.describeCluster()),
        ms,
      );
      return true;
    } catch {
      await this.dropAdmin();
      return false;
    }
  }

  /** Each partition's first and next offset; fails (BROKER_UNAVAILABLE-worthy) when the broker does not answer within `ms`. */
  async partitionEnds(topic: string, ms = 10_000): Promise<PartitionEnds[]> {
    try {
      return await within(
        this.asking(ms).then((admin) => admin.fetchTopicOffsets(topic)),
        ms,
      );
    } catch (error) {
      await this.dropAdmin();
      throw error;
    }
  }

  consumer(options: PartitionedConsumerOptions): PartitionedConsumer {
    return new KafkaPartitionedConsumer(this.kafka, options);
  }

  async deadLetterSink(topic: string): Promise<Closable<DeadLetterSink>> {
    const producer = await this.producer();
    return { value: new KafkaDeadLetterSink(producer, topic), close: () => producer.disconnect() };
  }

  /** The dead-letter topic read back; with `forRedrive`, able to publish to `eventsTopic` too. */
  async deadLetterTopic(name: string, eventsTopic: string, { forRedrive = false } = {}): Promise<Closable<KafkaDeadLetterTopic>> {
    const producer = forRedrive ? await this.producer() : undefined;
    return { value: new KafkaDeadLetterTopic(this.kafka, name, eventsTopic, producer), close: async () => producer?.disconnect() };
  }

  async close(): Promise<void> {
    await this.dropAdmin();
  }

  private async producer(): Promise<Producer> {
    const producer = this.kafka.producer({ allowAutoTopicCreation: false, createPartitioner: Partitioners.DefaultPartitioner });
    await producer.connect();
    return producer;
  }

  private asking(ms: number): Promise<Admin> {
    this.admin ??= (async () => {
      const admin = this.kafka.admin();
      await within(admin.connect(), ms);
      return admin;
    })();
    return this.admin;
  }

  private async dropAdmin(): Promise<void> {
    const admin = this.admin;
    this.admin = undefined;
    await admin?.then((a) => a.disconnect()).catch(() => undefined);
  }
}
