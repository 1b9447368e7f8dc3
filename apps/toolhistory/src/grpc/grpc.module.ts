import { Module } from '@nestjs/common';
import type { Pool } from 'pg';
import type { AppConfig } from '@toolhistory/config';
import type { EventStore, ReplayPolicy } from '@toolhistory/domain';
import { PostgresAuditReader, PostgresConversationEraser, PostgresReplayReader } from '@toolhistory/persistence';
import { QueryAudit } from '../audit/query-audit';
import { EraseConversation } from '../erasure/erase-conversation';
import { EventStoreConversationEraser } from '../erasure/event-store-conversation-eraser';
import { GetReplayHistory } from '../replay/get-replay-history';
import { SubscribeToolEvents } from '../subscription/subscribe-tool-events';
import {
  APP_CONFIG,
  ERASE_CONVERSATION,
  GET_REPLAY_HISTORY,
  PG_POOL,
  QUERY_AUDIT,
  REPLAY_POLICY,
  EVENT_STORE,
  SUBSCRIBE_TOOL_EVENTS,
} from '../tokens';
import { GrpcHealthService } from './grpc-health.service';
import { ToolHistoryController } from './tool-history.controller';

@Module({
  controllers: [ToolHistoryController],
  providers: [
    {
      provide: GET_REPLAY_HISTORY,
      inject: [PG_POOL, REPLAY_POLICY, APP_CONFIG],
      useFactory: (pool: Pool, policy: ReplayPolicy, config: AppConfig) =>
        new GetReplayHistory(new PostgresReplayReader(pool), policy, { cacheBytes: config.grpc.replayCacheBytes }),
    },
    {
      provide: ERASE_CONVERSATION,
      inject: [PG_POOL, APP_CONFIG, EVENT_STORE],
      useFactory: (pool: Pool, config: AppConfig, events: EventStore) =>
        new EraseConversation(
          config.eventStore.kind === 'eventstoredb'
            ? new EventStoreConversationEraser(events, new PostgresConversationEraser(pool))
            : new PostgresConversationEraser(pool),
        ),
    },
    { provide: QUERY_AUDIT, inject: [PG_POOL], useFactory: (pool: Pool) => new QueryAudit(new PostgresAuditReader(pool)) },
    {
      provide: SUBSCRIBE_TOOL_EVENTS,
      inject: [EVENT_STORE],
      useFactory: (events: EventStore) => new SubscribeToolEvents(events),
    },
    GrpcHealthService,
  ],
})
export class GrpcModule {}
