import { Inject, Module, OnApplicationShutdown } from '@nestjs/common';
import type { Pool } from 'pg';
import type { Logger } from 'pino';
import type { AppConfig } from '@toolhistory/config';
import { type AuditReader, type ConversationChanges, type EventStore, RecordingProgress, type ReplayPolicy } from '@toolhistory/domain';
import type { KafkaMessaging } from '@toolhistory/messaging';
import {
  PostgresAuditReader,
  PostgresConversationChanges,
  PostgresConversationForker,
  PostgresConversationWatchReader,
  type PostgresQueryCanceller,
  PostgresRecordingProgressReader,
  PostgresReplayReader,
  READ_MODEL_PROJECTION,
  SEARCH_PROJECTION_TYPES,
  SEARCH_PROJECTIONS,
} from '@toolhistory/persistence';
import { ConsistencyGate } from '../consistency/consistency-gate';
import type { AwaitRecorded } from '../consistency/await-recorded';
import { SharedConversationChanges } from '../consistency/shared-conversation-changes';
import { cachedPartitions } from '../consistency/topic-partitions';
import { GetUsage } from '../get-usage/get-usage';
import { GetUsageGrpcController } from '../get-usage/get-usage.grpc-controller';
import { ListToolInvocations } from '../list-tool-invocations/list-tool-invocations';
import { ListToolInvocationsGrpcController } from '../list-tool-invocations/list-tool-invocations.grpc-controller';
import { SearchToolHistory } from '../search-tool-history/search-tool-history';
import { SearchToolHistoryGrpcController } from '../search-tool-history/search-tool-history.grpc-controller';
import { EraseConversation } from '../erasure/erase-conversation';
import { EraseConversationGrpcController } from '../erasure/erase-conversation.grpc-controller';
import { ForkConversation } from '../fork-conversation/fork-conversation';
import { ForkConversationGrpcController } from '../fork-conversation/fork-conversation.grpc-controller';
import { type ReplayReading, replayReading } from '../replay/replay-reading';
import { GetReplayHistoryGrpcController } from '../replay/get-replay-history.grpc-controller';
import { OpenSubscriptions } from '../subscription/open-subscriptions';
import { SubscribeToolEvents } from '../subscription/subscribe-tool-events';
import { SubscribeToolEventsGrpcController } from '../subscription/subscribe-tool-events.grpc-controller';
import { ConversationChangeHub } from '../watch-conversation/conversation-change-hub';
import { WatchConversation } from '../watch-conversation/watch-conversation';
import { WatchConversationGrpcController } from '../watch-conversation/watch-conversation.grpc-controller';
import {
  APP_CONFIG,
  AWAIT_RECORDED,
  CONVERSATION_CHANGES,
  ENCRYPTION,
  MESSAGING,
  OPEN_SUBSCRIPTIONS,
  ERASE_CONVERSATION,
  FORK_CONVERSATION,
  GET_REPLAY_HISTORY,
  GRPC_EVENT_STORE,
  METRICS,
  GRPC_PG_POOL,
  QUERY_CANCELLER,
  AUDIT_READER,
  LIST_TOOL_INVOCATIONS,
  GET_USAGE,
  SEARCH_TOOL_HISTORY,
  REPLAY_POLICY,
  REPLAY_READING,
  ROOT_LOGGER,
  SUBSCRIBE_TOOL_EVENTS,
  WATCH_CHANGES,
  WATCH_CONVERSATION,
} from '../tokens';
import { o200kTokens } from '@toolhistory/tokenizer';
import { ReplayCacheReport } from '../replay/replay-cache-report';
import type { ServiceMetrics } from '../observability/service-metrics';
import type { Encryption } from '../encryption/open-encryption';
import { conversationEraser } from '../erasure/conversation-eraser';

const vaultOf = (encryption: Encryption | null) => encryption?.vault ?? null;

/** The ToolHistory service: one controller per RPC, every one behind the CallerGuard (registered in the core module). */
@Module({
  controllers: [
    GetReplayHistoryGrpcController,
    EraseConversationGrpcController,
    ForkConversationGrpcController,
    ListToolInvocationsGrpcController,
    GetUsageGrpcController,
    SearchToolHistoryGrpcController,
    SubscribeToolEventsGrpcController,
    WatchConversationGrpcController,
  ],
  providers: [
    ReplayCacheReport,
    {
      provide: OPEN_SUBSCRIPTIONS,
      inject: [APP_CONFIG],
      useFactory: (config: AppConfig) => new OpenSubscriptions(config.grpc.maxSubscriptionsPerTenant),
    },
    {
      // One feed for the replay cache and the recording progress, in that order (shared-conversation-changes.ts).
      provide: CONVERSATION_CHANGES,
      inject: [APP_CONFIG, ROOT_LOGGER],
      useFactory: (config: AppConfig, logger: Logger) =>
        new SharedConversationChanges(
          new PostgresConversationChanges(config.database, (err) =>
            logger.warn(
              { component: 'replay', err: { message: err.message } },
              'read-model change notifications lost; cached conversations are checked against the database until they are back',
            ),
          ),
        ),
    },
    {
      provide: REPLAY_READING,
      inject: [GRPC_PG_POOL, QUERY_CANCELLER, REPLAY_POLICY, APP_CONFIG, CONVERSATION_CHANGES, AWAIT_RECORDED, ENCRYPTION],
      useFactory: (
        pool: Pool,
        canceller: PostgresQueryCanceller,
        policy: ReplayPolicy,
        config: AppConfig,
        changes: ConversationChanges,
        awaitRecorded: AwaitRecorded,
        encryption: Encryption | null,
      ) =>
        replayReading(new PostgresReplayReader(pool, canceller, vaultOf(encryption)), policy, {
          cacheBytes: config.grpc.replayCacheBytes,
          tokens: o200kTokens,
          changes,
          maxDatabaseRequests: config.grpc.replayMaxDatabaseRequests,
          awaitRecorded,
        }),
    },
    {
      // Read-your-writes: what every read with a consistency token waits on. Hears the feed after the replay cache.
      provide: AWAIT_RECORDED,
      inject: [GRPC_PG_POOL, QUERY_CANCELLER, APP_CONFIG, CONVERSATION_CHANGES, MESSAGING],
      useFactory: (
        pool: Pool,
        canceller: PostgresQueryCanceller,
        config: AppConfig,
        changes: SharedConversationChanges,
        messaging: KafkaMessaging,
      ): AwaitRecorded => {
        const progress = new RecordingProgress(config.kafka.groupId);
        const gate = new ConsistencyGate(progress, new PostgresRecordingProgressReader(pool, canceller), {
          consumerGroup: config.kafka.groupId,
          topic: config.kafka.topic,
          partitions: cachedPartitions(async () => (await messaging.partitionEnds(config.kafka.topic, 2_000)).map((p) => p.partition)),
          rules: { readModelProjection: config.eventStore.kind === 'eventstoredb' ? READ_MODEL_PROJECTION : null },
          feedCurrent: () => changes.isCurrent,
        });
        changes.watchLast({
          changed: () => undefined,
          changedAll: () => undefined,
          current: () => undefined,
          stale: () => undefined,
          progressed: (notice) => progress.heard(notice, 'feed'),
        });
        return (readAfter, need, signal) => gate.awaitRecorded(readAfter, need, signal);
      },
    },
    { provide: GET_REPLAY_HISTORY, inject: [REPLAY_READING], useFactory: (reading: ReplayReading) => reading.replay },
    {
      provide: ERASE_CONVERSATION,
      inject: [GRPC_PG_POOL, APP_CONFIG, GRPC_EVENT_STORE, ENCRYPTION],
      useFactory: (pool: Pool, config: AppConfig, events: EventStore, encryption: Encryption | null) =>
        new EraseConversation(conversationEraser(pool, config, events, encryption)),
    },
    {
      // Forks are written with their read model in one PostgreSQL transaction; with EventStoreDB they are refused (ADR 026).
      provide: FORK_CONVERSATION,
      inject: [GRPC_PG_POOL, APP_CONFIG, AWAIT_RECORDED, ENCRYPTION],
      useFactory: (pool: Pool, config: AppConfig, awaitRecorded: AwaitRecorded, encryption: Encryption | null) =>
        new ForkConversation(
          config.eventStore.kind === 'eventstoredb' ? null : new PostgresConversationForker(pool, o200kTokens, vaultOf(encryption)),
          awaitRecorded,
        ),
    },
    {
      provide: AUDIT_READER,
      inject: [GRPC_PG_POOL, QUERY_CANCELLER, ENCRYPTION],
      useFactory: (pool: Pool, canceller: PostgresQueryCanceller, encryption: Encryption | null) =>
        new PostgresAuditReader(pool, canceller, vaultOf(encryption)),
    },
    {
      provide: LIST_TOOL_INVOCATIONS,
      inject: [AUDIT_READER, AWAIT_RECORDED],
      useFactory: (reader: AuditReader, awaitRecorded: AwaitRecorded) => new ListToolInvocations(reader, awaitRecorded),
    },
    { provide: GET_USAGE, inject: [AUDIT_READER], useFactory: (reader: AuditReader) => new GetUsage(reader) },
    {
      provide: SEARCH_TOOL_HISTORY,
      inject: [AUDIT_READER, AWAIT_RECORDED],
      useFactory: (reader: AuditReader, awaitRecorded: AwaitRecorded) =>
        new SearchToolHistory(reader, {
          awaitRecorded,
          needs: {
            words: { kind: 'search', projection: SEARCH_PROJECTIONS.words, types: SEARCH_PROJECTION_TYPES },
            substring: { kind: 'search', projection: SEARCH_PROJECTIONS.substring, types: SEARCH_PROJECTION_TYPES },
          },
        }),
    },
    {
      provide: SUBSCRIBE_TOOL_EVENTS,
      inject: [GRPC_EVENT_STORE],
      useFactory: (events: EventStore) => new SubscribeToolEvents(events),
    },
    {
      // A feed reports to one watcher: the watches have their own, beside the replay cache's.
      provide: WATCH_CHANGES,
      inject: [APP_CONFIG, ROOT_LOGGER],
      useFactory: (config: AppConfig, logger: Logger) =>
        new PostgresConversationChanges(config.database, (err) =>
          logger.warn(
            { component: 'watch', err: { message: err.message } },
            'read-model change notifications lost; watches look again once they are back',
          ),
        ),
    },
    {
      provide: WATCH_CONVERSATION,
      inject: [GRPC_PG_POOL, APP_CONFIG, GRPC_EVENT_STORE, WATCH_CHANGES, AWAIT_RECORDED, ENCRYPTION],
      useFactory: (
        pool: Pool,
        config: AppConfig,
        events: EventStore,
        changes: ConversationChanges,
        awaitRecorded: AwaitRecorded,
        encryption: Encryption | null,
      ) => {
        const reader = new PostgresConversationWatchReader(
          pool,
          config.eventStore.kind === 'eventstoredb' ? events : null,
          vaultOf(encryption),
        );
        const hub = new ConversationChangeHub(reader);
        changes.watch(hub);
        return new WatchConversation(reader, hub, undefined, awaitRecorded);
      },
    },
  ],
  // The console's HTTP API answers from the same use cases (and the same replay cache).
  exports: [
    OPEN_SUBSCRIPTIONS,
    WATCH_CONVERSATION,
    AUDIT_READER,
    LIST_TOOL_INVOCATIONS,
    GET_USAGE,
    SEARCH_TOOL_HISTORY,
    GET_REPLAY_HISTORY,
  ],
})
export class GrpcModule implements OnApplicationShutdown {
  constructor(
    @Inject(CONVERSATION_CHANGES) private readonly changes: ConversationChanges,
    @Inject(WATCH_CHANGES) private readonly watchChanges: ConversationChanges,
    @Inject(REPLAY_READING) replay: ReplayReading,
    @Inject(OPEN_SUBSCRIPTIONS) subscriptions: OpenSubscriptions,
    @Inject(METRICS) metrics: ServiceMetrics,
  ) {
    metrics.observeReplayCache(() => replay.cacheStats());
    metrics.observeSubscriptions(() => subscriptions.count());
  }

  async onApplicationShutdown(): Promise<void> {
    await Promise.all([this.changes.close(), this.watchChanges.close()]);
  }
}
