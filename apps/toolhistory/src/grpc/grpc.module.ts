import { Inject, Module, OnApplicationShutdown } from '@nestjs/common';
import type { Pool } from 'pg';
import type { Logger } from 'pino';
import type { AppConfig } from '@toolhistory/config';
import type { ConversationChanges, EventStore, ReplayPolicy } from '@toolhistory/domain';
import {
  PostgresAuditReader,
  PostgresConversationChanges,
  PostgresConversationEraser,
  type PostgresQueryCanceller,
  PostgresReplayReader,
} from '@toolhistory/persistence';
import { GetUsageGrpcController } from '../audit/get-usage.grpc-controller';
import { ListToolInvocationsGrpcController } from '../audit/list-tool-invocations.grpc-controller';
import { QueryAudit } from '../audit/query-audit';
import { SearchToolHistoryGrpcController } from '../audit/search-tool-history.grpc-controller';
import { EraseConversation } from '../erasure/erase-conversation';
import { EraseConversationGrpcController } from '../erasure/erase-conversation.grpc-controller';
import { EventStoreConversationEraser } from '../erasure/event-store-conversation-eraser';
import { type ReplayReading, replayReading } from '../replay/replay-reading';
import { GetReplayHistoryGrpcController } from '../replay/get-replay-history.grpc-controller';
import { OpenSubscriptions } from '../subscription/open-subscriptions';
import { SubscribeToolEvents } from '../subscription/subscribe-tool-events';
import { SubscribeToolEventsGrpcController } from '../subscription/subscribe-tool-events.grpc-controller';
import {
  APP_CONFIG,
  CONVERSATION_CHANGES,
  OPEN_SUBSCRIPTIONS,
  ERASE_CONVERSATION,
  GET_REPLAY_HISTORY,
  GRPC_EVENT_STORE,
  METRICS,
  GRPC_PG_POOL,
  QUERY_CANCELLER,
  QUERY_AUDIT,
  REPLAY_POLICY,
  REPLAY_READING,
  ROOT_LOGGER,
  SUBSCRIBE_TOOL_EVENTS,
} from '../tokens';
import { o200kTokens } from '@toolhistory/tokenizer';
import { ReplayCacheReport } from '../replay/replay-cache-report';
import type { ServiceMetrics } from '../observability/service-metrics';

/** The ToolHistory service: one controller per RPC, every one behind the CallerGuard (registered in the core module). */
@Module({
  controllers: [
    GetReplayHistoryGrpcController,
    EraseConversationGrpcController,
    ListToolInvocationsGrpcController,
    GetUsageGrpcController,
    SearchToolHistoryGrpcController,
    SubscribeToolEventsGrpcController,
  ],
  providers: [
    ReplayCacheReport,
    {
      provide: OPEN_SUBSCRIPTIONS,
      inject: [APP_CONFIG],
      useFactory: (config: AppConfig) => new OpenSubscriptions(config.grpc.maxSubscriptionsPerTenant),
    },
    {
      provide: CONVERSATION_CHANGES,
      inject: [APP_CONFIG, ROOT_LOGGER],
      useFactory: (config: AppConfig, logger: Logger) =>
        new PostgresConversationChanges(config.database, (err) =>
          logger.warn(
            { component: 'replay', err: { message: err.message } },
            'read-model change notifications lost; cached conversations are checked against the database until they are back',
          ),
        ),
    },
    {
      provide: REPLAY_READING,
      inject: [GRPC_PG_POOL, QUERY_CANCELLER, REPLAY_POLICY, APP_CONFIG, CONVERSATION_CHANGES],
      useFactory: (pool: Pool, canceller: PostgresQueryCanceller, policy: ReplayPolicy, config: AppConfig, changes: ConversationChanges) =>
        replayReading(new PostgresReplayReader(pool, canceller), policy, {
          cacheBytes: config.grpc.replayCacheBytes,
          tokens: o200kTokens,
          changes,
          maxDatabaseRequests: config.grpc.replayMaxDatabaseRequests,
        }),
    },
    { provide: GET_REPLAY_HISTORY, inject: [REPLAY_READING], useFactory: (reading: ReplayReading) => reading.replay },
    {
      provide: ERASE_CONVERSATION,
      inject: [GRPC_PG_POOL, APP_CONFIG, GRPC_EVENT_STORE],
      useFactory: (pool: Pool, config: AppConfig, events: EventStore) =>
        new EraseConversation(
          config.eventStore.kind === 'eventstoredb'
            ? new EventStoreConversationEraser(events, new PostgresConversationEraser(pool))
            : new PostgresConversationEraser(pool),
        ),
    },
    {
      provide: QUERY_AUDIT,
      inject: [GRPC_PG_POOL, QUERY_CANCELLER],
      useFactory: (pool: Pool, canceller: PostgresQueryCanceller) => new QueryAudit(new PostgresAuditReader(pool, canceller)),
    },
    {
      provide: SUBSCRIBE_TOOL_EVENTS,
      inject: [GRPC_EVENT_STORE],
      useFactory: (events: EventStore) => new SubscribeToolEvents(events),
    },
  ],
  // The console's HTTP API answers from the same use cases (and the same replay cache).
  exports: [OPEN_SUBSCRIPTIONS, QUERY_AUDIT, GET_REPLAY_HISTORY],
})
export class GrpcModule implements OnApplicationShutdown {
  constructor(
    @Inject(CONVERSATION_CHANGES) private readonly changes: ConversationChanges,
    @Inject(REPLAY_READING) replay: ReplayReading,
    @Inject(OPEN_SUBSCRIPTIONS) subscriptions: OpenSubscriptions,
    @Inject(METRICS) metrics: ServiceMetrics,
  ) {
    metrics.observeReplayCache(() => replay.cacheStats());
    metrics.observeSubscriptions(() => subscriptions.count());
  }

  async onApplicationShutdown(): Promise<void> {
    await this.changes.close();
  }
}
