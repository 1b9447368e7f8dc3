import { Inject, Module } from '@nestjs/common';
import type { Pool } from 'pg';
import type { AppConfig } from '@toolhistory/config';
import { projectionLag, SEARCH_PROJECTION_TYPES, SEARCH_PROJECTIONS } from '@toolhistory/persistence';
import type { ServiceMetrics } from '../observability/service-metrics';
import { ReadModelProjectorService } from '../projector/read-model-projector.service';
import { APP_CONFIG, METRICS, PG_POOL } from '../tokens';
import { KafkaRecorderConsumer } from './kafka-recorder.consumer';
import { RecordingActivity } from './recording-activity';
import { RetentionSweeperService } from '../retention/retention-sweeper.service';

@Module({ providers: [RecordingActivity, KafkaRecorderConsumer, ReadModelProjectorService, RetentionSweeperService] })
export class RecorderModule {
  constructor(@Inject(APP_CONFIG) config: AppConfig, @Inject(PG_POOL) pool: Pool, @Inject(METRICS) metrics: ServiceMetrics) {
    // The read model is written with the events; each search follows them. With EventStoreDB the
    // positions live there, so no lag is read from this database.
    if (config.eventStore.kind === 'postgres') {
      metrics.observeProjectionLag(async () => {
        const lags = await Promise.all(
          Object.values(SEARCH_PROJECTIONS).map(async (projection) => ({
            projection,
            lag: await projectionLag(pool, projection, SEARCH_PROJECTION_TYPES).catch(() => undefined),
          })),
        );
        return lags.flatMap(({ projection, lag }) => (lag === undefined ? [] : [{ labels: { projection }, value: lag }]));
      });
    }
  }
}
