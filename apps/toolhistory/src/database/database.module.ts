import { Global, Inject, Module, OnApplicationShutdown } from '@nestjs/common';
import type { Pool } from 'pg';
import type { Logger } from 'pino';
import type { AppConfig } from '@toolhistory/config';
import type { RedactionPolicy } from '@toolhistory/domain';
import { createPool, PostgresAppendListener, PostgresEventStore, PostgresRecordingStore } from '@toolhistory/persistence';
import { APP_CONFIG, APPEND_LISTENER, EVENT_STORE, PG_POOL, RECORDING_STORE, REDACTION_POLICY, ROOT_LOGGER } from '../tokens';

@Global()
@Module({
  providers: [
    {
      provide: PG_POOL,
      inject: [APP_CONFIG, ROOT_LOGGER],
      useFactory: (config: AppConfig, logger: Logger) =>
        createPool(config.database, {}, (err) => logger.warn({ component: 'database', err: { message: err.message } }, 'idle database connection lost')),
    },
    {
      provide: RECORDING_STORE,
      inject: [PG_POOL, REDACTION_POLICY],
      useFactory: (pool: Pool, redaction: RedactionPolicy) => new PostgresRecordingStore(pool, redaction),
    },
    {
      provide: APPEND_LISTENER,
      inject: [APP_CONFIG, ROOT_LOGGER],
      useFactory: (config: AppConfig, logger: Logger) =>
        new PostgresAppendListener(config.database, (err) =>
          logger.warn({ component: 'database', err: { message: err.message } }, 'append notifications lost; subscribers poll until reconnected'),
        ),
    },
    {
      provide: EVENT_STORE,
      inject: [PG_POOL, APPEND_LISTENER],
      useFactory: (pool: Pool, listener: PostgresAppendListener) => new PostgresEventStore(pool, listener),
    },
  ],
  exports: [PG_POOL, RECORDING_STORE, EVENT_STORE],
})
export class DatabaseModule implements OnApplicationShutdown {
  constructor(
    @Inject(PG_POOL) private readonly pool: Pool,
    @Inject(APPEND_LISTENER) private readonly listener: PostgresAppendListener,
  ) {}

  // Runs after the consumers have stopped (modules shut down in reverse order).
  async onApplicationShutdown(): Promise<void> {
    await this.listener.close();
    await this.pool.end();
  }
}
