import type { Kafka, Producer } from 'kafkajs';
import { Partitioners } from 'kafkajs';
import type { Pool } from 'pg';
import pino from 'pino';
import type { AppConfig } from '@toolhistory/config';
import type { EventStore } from '@toolhistory/domain';
import { EventStoreDbEventStore } from '@toolhistory/eventstoredb';
import { createKafka, KafkaDeadLetterTopic } from '@toolhistory/messaging';
import { createPool, PostgresEventStore, PostgresRedriveLedger } from '@toolhistory/persistence';

/** Where a command writes: its answer to `out`, notes and warnings to `err`. */
export interface CliOutput {
  out(text: string): void;
  err(text: string): void;
}

/**
 * What commands connect to, opened on first use and closed once: a command
 * that only reads the database never connects to Kafka.
 */
export class CliContext {
  private pool?: Pool;
  private kafka?: Kafka;
  private producer?: Producer;
  private eventStore?: EventStore;

  constructor(readonly config: AppConfig) {}

  database(): Pool {
    this.pool ??= createPool({ ...this.config.database, applicationName: 'toolhistory-cli' });
    return this.pool;
  }

  events(): EventStore {
    this.eventStore ??=
      this.config.eventStore.kind === 'eventstoredb' && this.config.eventStore.url
        ? EventStoreDbEventStore.connect(this.config.eventStore.url)
        : new PostgresEventStore(this.database());
    return this.eventStore;
  }

  async deadLetters(forRedrive = false): Promise<{ topic: KafkaDeadLetterTopic; ledger: PostgresRedriveLedger }> {
    const kafka = this.broker();
    if (forRedrive && !this.producer) {
      this.producer = kafka.producer({ allowAutoTopicCreation: false, createPartitioner: Partitioners.DefaultPartitioner });
      await this.producer.connect();
    }
    const { deadLetterTopic, topic } = this.config.kafka;
    return {
      topic: new KafkaDeadLetterTopic(kafka, deadLetterTopic, topic, this.producer),
      ledger: new PostgresRedriveLedger(this.database()),
    };
  }

  async close(): Promise<void> {
    await this.producer?.disconnect().catch(() => undefined);
    if (this.eventStore instanceof EventStoreDbEventStore) await this.eventStore.close().catch(() => undefined);
    await this.pool?.end().catch(() => undefined);
  }

  private broker(): Kafka {
    // kafkajs's own lines only at warn and above, on stderr: stdout is the command's answer.
    const log = pino({ level: 'warn' }, pino.destination(2));
    this.kafka ??= createKafka(this.config.kafka, log);
    return this.kafka;
  }
}
