import { BeforeApplicationShutdown, Inject, Injectable, OnApplicationBootstrap } from '@nestjs/common';
import type { Pool } from 'pg';
import type { Logger } from 'pino';
import type { AppConfig } from '@toolhistory/config';
import type { EventKeyFeed, EventStore, RecordedEventKeys } from '@toolhistory/domain';
import {
  PostgresReadModelProjection,
  PostgresSearchProjection,
  SearchKind,
  SEARCH_PROJECTION_TYPES,
  SEARCH_PROJECTIONS,
} from '@toolhistory/persistence';
import { ADMISSION, APP_CONFIG, ENCRYPTION, EVENT_KEY_FEED, EVENT_STORE, PG_POOL, ROOT_LOGGER } from '../tokens';
import type { Encryption } from '../encryption/open-encryption';
import { RecordingActivity } from '../recorder/recording-activity';
import type { ReadAdmission } from '../admission/read-admission';
import { ProjectorOptions, ReadModelProjector } from './read-model-projector';

/** How often a projector logs how fresh it is while it applies events. */
const FRESHNESS_REPORT_MS = 10_000;

/**
 * What the recorder role projects after commit, following the event store.
 * With events in PostgreSQL the recorder's own transaction writes the read
 * model, and each search's documents follow it here, one projection per
 * search (words, substrings). With EventStoreDB the read model follows it
 * here, its search documents in the same transaction.
 */
@Injectable()
export class ReadModelProjectorService implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private projectors: Array<ReadModelProjector | ReadModelProjector<RecordedEventKeys>> = [];

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(EVENT_STORE) private readonly events: EventStore,
    /** The events' keys only (PostgreSQL): what the search projections follow, opening the rows' payloads once. */
    @Inject(EVENT_KEY_FEED) private readonly eventKeys: EventKeyFeed | null,
    @Inject(PG_POOL) private readonly pool: Pool,
    @Inject(ENCRYPTION) private readonly encryption: Encryption | null,
    @Inject(ROOT_LOGGER) private readonly logger: Logger,
    private readonly recording: RecordingActivity,
    @Inject(ADMISSION) private readonly admission: ReadAdmission,
  ) {}

  private get vault() {
    return this.encryption?.vault ?? null;
  }

  onApplicationBootstrap(): void {
    const log = this.logger.child({ component: 'projector' });
    this.projectors =
      this.config.eventStore.kind === 'eventstoredb'
        ? [
            new ReadModelProjector(this.events, new PostgresReadModelProjection(this.pool, this.events, undefined, this.vault), {
              log,
              lagReportIntervalMs: FRESHNESS_REPORT_MS,
            }),
          ]
        : this.searchProjectors(this.eventKeys!, log);
    for (const projector of this.projectors) projector.start();
  }

  /**
   * Search may lag, recording may not: on a busy machine the recorder comes
   * first. Word search comes next (it has a freshness target); substring
   * search, whose trigrams cost the most, gives way to both, and takes
   * fewer, larger batches (up to a second later) so it is less often in
   * their way (docs/benchmarks.md, "Substring search on its own projection").
   * Both hold while this instance refuses reads, up to a bound on how far
   * behind that leaves them (ADR 039): a flood of reads gets the cores.
   */
  private searchProjectors(eventKeys: EventKeyFeed, log: Logger): Array<ReadModelProjector<RecordedEventKeys>> {
    const holdAtMostMs = this.config.admission.searchHoldMs;
    const searchOf = (kind: SearchKind, options: Pick<ProjectorOptions, 'batchSize' | 'lingerMs' | 'giveWayWhile'>) =>
      new ReadModelProjector(eventKeys, new PostgresSearchProjection(this.pool, kind, this.vault), {
        name: SEARCH_PROJECTIONS[kind],
        types: SEARCH_PROJECTION_TYPES,
        log,
        lagReportIntervalMs: FRESHNESS_REPORT_MS,
        holdWhile: () => this.admission.overloaded(),
        holdAtMostMs,
        ...options,
      });
    const words = searchOf('words', { batchSize: 2_000, giveWayWhile: () => this.recording.busy() });
    const substrings = searchOf('substring', {
      batchSize: 10_000,
      lingerMs: 1_000,
      giveWayWhile: () => this.recording.busy() || words.applying(),
    });
    return [words, substrings];
  }

  // Before the pool closes (DatabaseModule shuts down after this module).
  async beforeApplicationShutdown(): Promise<void> {
    await Promise.all(this.projectors.map((projector) => projector.stop()));
  }
}
