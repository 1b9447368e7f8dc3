import { Global, Inject, Module, OnApplicationShutdown } from '@nestjs/common';
import type { Pool } from 'pg';
import type { AppConfig } from '@toolhistory/config';
import { createPool, PostgresRecordingStore } from '@toolhistory/persistence';
import { APP_CONFIG, PG_POOL, RECORDING_STORE } from '../tokens';

@Global()
@Module({
  providers: [
    {
      provide: PG_POOL,
      inject: [APP_CONFIG],
      useFactory: (config: AppConfig) => createPool(config.database),
    },
    {
      provide: RECORDING_STORE,
      inject: [PG_POOL],
      useFactory: (pool: Pool) => new PostgresRecordingStore(pool),
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
