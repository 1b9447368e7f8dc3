import { Global, Inject, Module, OnApplicationShutdown } from '@nestjs/common';
import type { Pool } from 'pg';
import type { Logger } from 'pino';
import type { AppConfig } from '@toolhistory/config';
import type { RedactionPolicy } from '@toolhistory/domain';
import { createPool, PostgresRecordingStore } from '@toolhistory/persistence';
import { APP_CONFIG, PG_POOL, RECORDING_STORE, REDACTION_POLICY, ROOT_LOGGER } from '../tokens';

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
  ],
  exports: [PG_POOL, RECORDING_STORE],
})
export class DatabaseModule implements OnApplicationShutdown {
  constructor(@Inject(PG_POOL) private readonly pool: Pool) {}

  // Runs after the consumers have stopped (modules shut down in reverse order).
  async onApplicationShutdown(): Promise<void> {
    await this.pool.end();
  }
}
