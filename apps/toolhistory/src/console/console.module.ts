import { Module } from '@nestjs/common';
import type { Pool } from 'pg';
import type { AppConfig } from '@toolhistory/config';
import { KafkaMessaging } from '@toolhistory/messaging';
import { PostgresRedriveLedger } from '@toolhistory/persistence';
import type { QueryAudit } from '../audit/query-audit';
import { ListDeadLetters } from '../dead-letters/list-dead-letters';
import { GrpcModule } from '../grpc/grpc.module';
import type { GetReplayHistory } from '../replay/get-replay-history';
import { APP_CONFIG, CONVERSATION_TIMELINE, GET_REPLAY_HISTORY, GRPC_PG_POOL, LIST_DEAD_LETTERS, MESSAGING, QUERY_AUDIT } from '../tokens';
import { ConsoleAssetsHttpController } from './console-assets.http-controller';
import { ConversationTimelineHttpController } from './conversation-timeline.http-controller';
import { GetConversationTimeline } from './get-conversation-timeline';
import { GetUsageHttpController } from './get-usage.http-controller';
import { ListDeadLettersHttpController } from './list-dead-letters.http-controller';
import { SearchToolHistoryHttpController } from './search-tool-history.http-controller';
import { WhoAmIHttpController } from './who-am-i.http-controller';

/**
 * The audit console, with the gRPC role: its page and a JSON API over the
 * same use cases as the RPCs (one controller per use case), every route
 * behind the CallerGuard with its tenant checked.
 */
@Module({
  imports: [GrpcModule],
  controllers: [
    ConsoleAssetsHttpController,
    WhoAmIHttpController,
    ConversationTimelineHttpController,
    SearchToolHistoryHttpController,
    GetUsageHttpController,
    ListDeadLettersHttpController,
  ],
  providers: [
    {
      provide: CONVERSATION_TIMELINE,
      inject: [QUERY_AUDIT, GET_REPLAY_HISTORY],
      useFactory: (audit: QueryAudit, replay: GetReplayHistory) => new GetConversationTimeline(audit, replay),
    },
    {
      provide: LIST_DEAD_LETTERS,
      inject: [MESSAGING, APP_CONFIG, GRPC_PG_POOL],
      useFactory: async (messaging: KafkaMessaging, config: AppConfig, pool: Pool) => {
        // Read-only: no producer is opened, so nothing here can redrive.
        const topic = await messaging.deadLetterTopic(config.kafka.deadLetterTopic, config.kafka.topic);
        return new ListDeadLetters(topic.value, new PostgresRedriveLedger(pool));
      },
    },
  ],
})
export class ConsoleModule {}
