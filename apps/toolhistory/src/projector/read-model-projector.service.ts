import { BeforeApplicationShutdown, Inject, Injectable, OnApplicationBootstrap } from '@nestjs/common';
import type { Pool } from 'pg';
import type { Logger } from 'pino';
import type { AppConfig } from '@toolhistory/config';
import type { EventStore } from '@toolhistory/domain';
import { PostgresReadModelProjection } from '@toolhistory/persistence';
import { APP_CONFIG, EVENT_STORE, PG_POOL, ROOT_LOGGER } from '../tokens';
import { ReadModelProjector } from './read-model-projector';

/**
 * With events in EventStoreDB, the recorder role also feeds the read model
 * from a subscription (checkpoint and rows in one PostgreSQL transaction).
 * With PostgreSQL the recorder's own transaction does that, so this idles.
 */
@Injectable()
export class ReadModelProjectorService implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private projector?: ReadModelProjector;

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(EVENT_STORE) private readonly events: EventStore,
    @Inject(PG_POOL) private readonly pool: Pool,
    @Inject(ROOT_LOGGER) private readonly logger: Logger,
  ) {}

  onApplicationBootstrap(): void {
    if (this.config.eventStore.kind !== 'eventstoredb') return;
    const log = this.logger.child({ component: 'projector' });
    this.projector = new ReadModelProjector(this.events, new PostgresReadModelProjection(this.pool, this.events), { log });
    this.projector.start();
  }

  // Before the pool closes (DatabaseModule shuts down after this module).
  async beforeApplicationShutdown(): Promise<void> {
    await this.projector?.stop();
  }
}
