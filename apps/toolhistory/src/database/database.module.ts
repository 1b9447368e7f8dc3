import { Global, Inject, Module, type OnApplicationShutdown } from '@nestjs/common';
import type { Pool } from 'pg';
import type { Logger } from 'pino';
import type { AppConfig } from '@toolhistory/config';
import {
  type EventStore,
  OpenedEventStore,
  reasoningRulesOf,
  GroupedRecording,
  RecordBatch,
  type RedactionPolicy,
  type ReplayPolicy,
  type RetentionPolicy,
} from '@toolhistory/domain';
import { EventStoreDbEventStore, EventStoreRecordingStorage } from '@toolhistory/eventstoredb';
import {
  createPool,
  PostgresAppendListener,
  PostgresEventKeys,
  PostgresConsumerOffsets,
  PostgresEventStore,
  PostgresQueryCanceller,
  PostgresReasoningStore,
  PostgresRecordingStorage,
} from '@toolhistory/persistence';
import { o200kTokens } from '@toolhistory/tokenizer';
import type { ServiceMetrics } from '../observability/service-metrics';
import type { Encryption } from '../encryption/open-encryption';
import {
  APP_CONFIG,
  APPEND_LISTENER,
  ENCRYPTION,
  EVENT_STORE,
  GRPC_EVENT_STORE,
  GRPC_PG_POOL,
  HEALTH_PG_POOL,
  METRICS,
  PG_POOL,
  QUERY_CANCELLER,
  RECORDING_STORE,
  REDACTION_POLICY,
  REPLAY_POLICY,
  RETENTION_POLICY,
  ROOT_LOGGER,
  STORED_EVENT_STORE,
  EVENT_KEY_FEED,
} from '../tokens';

/** A pool of the service's own, with the configured statement and idle-in-transaction limits (pools connect only when used). */
function servicePool(config: AppConfig, logger: Logger, role: string): Pool {
  return createPool({ ...config.database, applicationName: `toolhistory-${role}` }, {}, (err) =>
    logger.warn({ component: 'database', pool: role, err: { message: err.message } }, 'idle database connection lost'),
  );
}

const isEventStoreDb = (config: AppConfig) => config.eventStore.kind === 'eventstoredb' && config.eventStore.url !== null;

/** The event store as its readers see it: payloads opened (encryption at rest), or as stored when nothing rests sealed. */
const opened = (events: EventStore, encryption: Encryption | null): EventStore =>
  encryption === null ? events : new OpenedEventStore(events, encryption.vault, Date.now);

/**
 * PostgreSQL for both roles, each with a pool of its own (DATABASE_POOL_SIZE
 * connections each), so a burst of audit queries cannot starve recording
 * and a stalled batch cannot starve turn-start queries.
 */
@Global()
@Module({
  providers: [
    {
      provide: PG_POOL,
      inject: [APP_CONFIG, ROOT_LOGGER],
      useFactory: (config: AppConfig, logger: Logger) => servicePool(config, logger, 'recorder'),
    },
    {
      provide: GRPC_PG_POOL,
      inject: [APP_CONFIG, ROOT_LOGGER],
      useFactory: (config: AppConfig, logger: Logger) => servicePool(config, logger, 'grpc'),
    },
    {
      // The health check's one connection: never queued behind the reads of a flood.
      provide: HEALTH_PG_POOL,
      inject: [APP_CONFIG, ROOT_LOGGER],
      useFactory: (config: AppConfig, logger: Logger) =>
        createPool(
          { ...config.database, poolSize: 1, applicationName: 'toolhistory-health', statementTimeoutMs: 1_500 },
          { connectionTimeoutMillis: 1_500 },
          (err) => logger.warn({ component: 'database', pool: 'health', err: { message: err.message } }, 'idle database connection lost'),
        ),
    },
    {
      provide: QUERY_CANCELLER,
      inject: [APP_CONFIG, ROOT_LOGGER],
      useFactory: (config: AppConfig, logger: Logger) =>
        new PostgresQueryCanceller(config.database, (err) =>
          logger.warn({ component: 'database', pool: 'canceller', err: { message: err.message } }, 'idle database connection lost'),
        ),
    },
    {
      // One recording service; where the events go is its storage's. With encryption at rest it seals each payload first.
      provide: RECORDING_STORE,
      inject: [APP_CONFIG, PG_POOL, REDACTION_POLICY, REPLAY_POLICY, RETENTION_POLICY, STORED_EVENT_STORE, ENCRYPTION],
      useFactory: (
        config: AppConfig,
        pool: Pool,
        redaction: RedactionPolicy,
        replay: ReplayPolicy,
        retention: RetentionPolicy,
        events: EventStore,
        encryption: Encryption | null,
      ) => {
        const rules = {
          redaction,
          tokens: o200kTokens,
          reasoning: reasoningRulesOf(replay),
          ...(config.encryption.atRest && encryption !== null ? { vault: encryption.vault, retention, now: Date.now } : {}),
        };
        if (config.eventStore.kind === 'eventstoredb')
          return new RecordBatch(
            new EventStoreRecordingStorage(events, new PostgresConsumerOffsets(pool), new PostgresReasoningStore(pool)),
            rules,
          );
        // In PostgreSQL the batches that arrive while one is recorded go together in the next transaction (group commit).
        return new GroupedRecording(new RecordBatch(new PostgresRecordingStorage(pool), rules));
      },
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
      provide: STORED_EVENT_STORE,
      inject: [APP_CONFIG, PG_POOL, APPEND_LISTENER],
      useFactory: (config: AppConfig, pool: Pool, listener: PostgresAppendListener) =>
        isEventStoreDb(config) ? EventStoreDbEventStore.connect(config.eventStore.url!) : new PostgresEventStore(pool, listener),
    },
    {
      provide: EVENT_KEY_FEED,
      inject: [APP_CONFIG, PG_POOL, APPEND_LISTENER],
      useFactory: (config: AppConfig, pool: Pool, listener: PostgresAppendListener) =>
        isEventStoreDb(config) ? null : new PostgresEventKeys(pool, listener),
    },
    {
      provide: EVENT_STORE,
      inject: [STORED_EVENT_STORE, ENCRYPTION],
      useFactory: (events: EventStore, encryption: Encryption | null) => opened(events, encryption),
    },
    {
      provide: GRPC_EVENT_STORE,
      inject: [APP_CONFIG, GRPC_PG_POOL, APPEND_LISTENER, EVENT_STORE, ENCRYPTION],
      useFactory: (config: AppConfig, pool: Pool, listener: PostgresAppendListener, events: EventStore, encryption: Encryption | null) =>
        isEventStoreDb(config) ? events : opened(new PostgresEventStore(pool, listener), encryption),
    },
  ],
  exports: [
    PG_POOL,
    GRPC_PG_POOL,
    HEALTH_PG_POOL,
    QUERY_CANCELLER,
    RECORDING_STORE,
    STORED_EVENT_STORE,
    EVENT_KEY_FEED,
    EVENT_STORE,
    GRPC_EVENT_STORE,
  ],
})
export class DatabaseModule implements OnApplicationShutdown {
  constructor(
    @Inject(PG_POOL) private readonly pool: Pool,
    @Inject(GRPC_PG_POOL) private readonly grpcPool: Pool,
    @Inject(HEALTH_PG_POOL) private readonly healthPool: Pool,
    @Inject(QUERY_CANCELLER) private readonly canceller: PostgresQueryCanceller,
    @Inject(APPEND_LISTENER) private readonly listener: PostgresAppendListener,
    @Inject(STORED_EVENT_STORE) private readonly events: EventStore,
    @Inject(METRICS) metrics: ServiceMetrics,
  ) {
    metrics.observePools(() =>
      [
        ['recorder', pool],
        ['grpc', grpcPool],
      ].flatMap(([name, p]) => [
        { labels: { pool: name as string, state: 'total' }, value: (p as Pool).totalCount },
        { labels: { pool: name as string, state: 'idle' }, value: (p as Pool).idleCount },
        { labels: { pool: name as string, state: 'waiting' }, value: (p as Pool).waitingCount },
      ]),
    );
  }

  // Runs after the consumers have stopped (modules shut down in reverse order).
  async onApplicationShutdown(): Promise<void> {
    await this.listener.close();
    if (this.events instanceof EventStoreDbEventStore) await this.events.close();
    await Promise.all([this.pool.end(), this.grpcPool.end(), this.healthPool.end(), this.canceller.close()]);
  }
}
