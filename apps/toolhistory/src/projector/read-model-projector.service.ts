import { BeforeApplicationShutdown, Inject, Injectable, OnApplicationBootstrap } from '@nestjs/common';
import type { Pool } from 'pg';
import type { Logger } from 'pino';
import type { AppConfig } from '@toolhistory/config';
import type { EventStore } from '@toolhistory/domain';
import { PostgresReadModelProjection, PostgresSearchProjection, SEARCH_PROJECTION_TYPES } from '@toolhistory/persistence';
import { APP_CONFIG, EVENT_STORE, PG_POOL, ROOT_LOGGER } from '../tokens';
import { RecordingActivity } from '../recorder/recording-activity';
import { ReadModelProjector } from './read-model-projector';

/** How often a projector logs how fresh it is while it applies events. */
const FRESHNESS_REPORT_MS = 10_000;

/**
 * What the recorder role projects after commit, following the event store.
 * With events in PostgreSQL the recorder's own transaction writes the read
 * model, and the search documents follow it here. With EventStoreDB the
 * read model follows it here, its search documents in the same transaction.
 */
@Injectable()
export class ReadModelProjectorService implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private projector?: ReadModelProjector;

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(EVENT_STORE) private readonly events: EventStore,
    @Inject(PG_POOL) private readonly pool: Pool,
    @Inject(ROOT_LOGGER) private readonly logger: Logger,
    private readonly recording: RecordingActivity,
  ) {}

  onApplicationBootstrap(): void {
    const log = this.logger.child({ component: 'projector' });
    this.projector =
      this.config.eventStore.kind === 'eventstoredb'
        ? new ReadModelProjector(this.events, new PostgresReadModelProjection(this.pool, this.events), {
            log,
            lagReportIntervalMs: FRESHNESS_REPORT_MS,
          })
        : new ReadModelProjector(this.events, new PostgresSearchProjection(this.pool), {
            name: 'search',
            types: SEARCH_PROJECTION_TYPES,
            batchSize: 2_000,
            // Search may lag, recording may not: on a busy machine the recorder comes first.
            giveWayWhile: () => this.recording.busy(),
            log,
            lagReportIntervalMs: FRESHNESS_REPORT_MS,
          });
    this.projector.start();
  }

  // Before the pool closes (DatabaseModule shuts down after this module).
  async beforeApplicationShutdown(): Promise<void> {
    await this.projector?.stop();
  }
}
