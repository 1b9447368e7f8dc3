import { Global, Inject, Module, OnApplicationShutdown } from '@nestjs/common';
import type { Pool } from 'pg';
import type { Logger } from 'pino';
import type { AppConfig } from '@toolhistory/config';
import type { EventStore, RedactionPolicy } from '@toolhistory/domain';
import { EventStoreDbEventStore } from '@toolhistory/eventstoredb';
import {
  createPool,
  PostgresAppendListener,
  PostgresConsumerOffsets,
  PostgresEventStore,
  PostgresRecordingStore,
} from '@toolhistory/persistence';
import { EventStoreRecordingStore } from '../recorder/event-store-recording-store';
import { APP_CONFIG, APPEND_LISTENER, EVENT_STORE, PG_POOL, RECORDING_STORE, REDACTION_POLICY, ROOT_LOGGER } from '../tokens';

@Global()
@Module({
  providers: [
    {
      provide: PG_POOL,
      inject: [APP_CONFIG, ROOT_LOGGER],
      useFactory: (config: AppConfig, logger: Logger) =>
        createPool(config.database, {}, (err) =>
          logger.warn({ component: 'database', err: { message: err.message } }, 'idle database connection lost'),
        ),
    },
    {
      provide: RECORDING_STORE,
      inject: [APP_CONFIG, PG_POOL, REDACTION_POLICY, EVENT_STORE],
      useFactory: (config: AppConfig, pool: Pool, redaction: RedactionPolicy, events: EventStore) =>
        config.eventStore.kind === 'eventstoredb'
          ? new EventStoreRecordingStore(events, new PostgresConsumerOffsets(pool), redaction)
          : new PostgresRecordingStore(pool, redaction),
    },
    {
      provide: APPEND_LISTENER,
      inject: [APP_CONFIG, ROOT_LOGGER],
      useFactory: (config: AppConfig, logger: Logger) =>
        new PostgresAppendListener(config.database, (err) =>
          logger.warn(
            { component: 'database', err: { message: err.message } },
            'append notifications lost; subscribers poll until reconnected',
          ),
        ),
    },
    {
      provide: EVENT_STORE,
      inject: [APP_CONFIG, PG_POOL, APPEND_LISTENER],
      useFactory: (config: AppConfig, pool: Pool, listener: PostgresAppendListener) =>
        config.eventStore.kind === 'eventstoredb' && config.eventStore.url
          ? EventStoreDbEventStore.connect(config.eventStore.url)
          : new PostgresEventStore(pool, listener),
    },
  ],
  exports: [PG_POOL, RECORDING_STORE, EVENT_STORE],
})
export class DatabaseModule implements OnApplicationShutdown {
  constructor(
    @Inject(PG_POOL) private readonly pool: Pool,
    @Inject(APPEND_LISTENER) private readonly listener: PostgresAppendListener,
    @Inject(EVENT_STORE) private readonly events: EventStore,
  ) {}

  // Runs after the consumers have stopped (modules shut down in reverse order).
  async onApplicationShutdown(): Promise<void> {
    await this.listener.close();
    if (this.events instanceof EventStoreDbEventStore) await this.events.close();
    await this.pool.end();
  }
}
