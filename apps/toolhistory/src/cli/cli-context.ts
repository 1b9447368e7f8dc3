import type { Pool } from 'pg';
import pino from 'pino';
import type { AppConfig } from '@toolhistory/config';
import type { EventStore } from '@toolhistory/domain';
import { EventStoreDbEventStore } from '@toolhistory/eventstoredb';
import { type Closable, type KafkaDeadLetterTopic, KafkaMessaging } from '@toolhistory/messaging';
import { createPool, PostgresEventStore, PostgresRedriveLedger } from '@toolhistory/persistence';
import { OpenedEventStore } from '@toolhistory/domain';
import { type Encryption, openEncryption } from '../encryption/open-encryption';

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
  private messaging?: KafkaMessaging;
  private readonly opened: Array<Closable<unknown>> = [];
  private eventStore?: EventStore;
  private encryptionOpened?: Promise<Encryption | null>;

  constructor(readonly config: AppConfig) {}

  /**
   * The keyring and the key store, checked against each other (null when
   * none is configured): every command that reads or writes payloads opens
   * and seals them as the service does.
   */
  encryption(): Promise<Encryption | null> {
    this.encryptionOpened ??= openEncryption(this.config);
    return this.encryptionOpened;
  }

  /** The event store as its readers see it: payloads opened. */
  async openedEvents(): Promise<EventStore> {
    const encryption = await this.encryption();
    return encryption === null ? this.events() : new OpenedEventStore(this.events(), encryption.vault, Date.now);
  }

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
    const { deadLetterTopic, topic } = this.config.kafka;
    const opened = await this.broker().deadLetterTopic(deadLetterTopic, topic, { forRedrive });
    this.opened.push(opened);
    return { topic: opened.value, ledger: new PostgresRedriveLedger(this.database()) };
  }

  async close(): Promise<void> {
    for (const opened of this.opened) await opened.close().catch(() => undefined);
    await this.messaging?.close();
    if (this.eventStore instanceof EventStoreDbEventStore) await this.eventStore.close().catch(() => undefined);
    await this.pool?.end().catch(() => undefined);
    const encryption = await this.encryptionOpened?.catch(() => null);
    await encryption?.close().catch(() => undefined);
  }

  private broker(): KafkaMessaging {
    // The client's own lines only at warn and above, on stderr: stdout is the command's answer.
    this.messaging ??= KafkaMessaging.create(this.config.kafka, pino({ level: 'warn' }, pino.destination(2)));
    return this.messaging;
  }
}
