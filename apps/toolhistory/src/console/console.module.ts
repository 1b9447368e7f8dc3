import { Module } from '@nestjs/common';
import type { Pool } from 'pg';
import type { AppConfig } from '@toolhistory/config';
import { KafkaMessaging } from '@toolhistory/messaging';
import { PostgresRedriveLedger } from '@toolhistory/persistence';
import type { AuditReader } from '@toolhistory/domain';
import { ConversationTimelineHttpController } from '../conversation-timeline/conversation-timeline.http-controller';
import { GetConversationTimeline } from '../conversation-timeline/get-conversation-timeline';
import { ListDeadLetters } from '../dead-letters/list-dead-letters';
import { ListDeadLettersHttpController } from '../dead-letters/list-dead-letters.http-controller';
import { GetUsageHttpController } from '../get-usage/get-usage.http-controller';
import { GrpcModule } from '../grpc/grpc.module';
import type { ListToolInvocations } from '../list-tool-invocations/list-tool-invocations';
import type { GetReplayHistory } from '../replay/get-replay-history';
import { SearchToolHistoryHttpController } from '../search-tool-history/search-tool-history.http-controller';
import {
  APP_CONFIG,
  AUDIT_READER,
  CONVERSATION_TIMELINE,
  GET_REPLAY_HISTORY,
  GRPC_PG_POOL,
  LIST_DEAD_LETTERS,
  LIST_TOOL_INVOCATIONS,
  MESSAGING,
} from '../tokens';
import { ConsoleAssetsHttpController } from './console-assets.http-controller';
import { WhoAmIHttpController } from './who-am-i.http-controller';
import { WatchConversationHttpController } from '../watch-conversation/watch-conversation.http-controller';

/**
 * The audit console, with the gRPC role: its page and a JSON API over the
 * same use cases as the RPCs (each route's controller beside its use case,
 * in the use case's folder), every route behind the CallerGuard with its
 * tenant checked.
 */
@Module({
  imports: [GrpcModule],
  controllers: [
    ConsoleAssetsHttpController,
    WhoAmIHttpController,
    ConversationTimelineHttpController,
    WatchConversationHttpController,
    SearchToolHistoryHttpController,
    GetUsageHttpController,
    ListDeadLettersHttpController,
  ],
  providers: [
    {
      provide: CONVERSATION_TIMELINE,
      inject: [LIST_TOOL_INVOCATIONS, AUDIT_READER, GET_REPLAY_HISTORY],
      useFactory: (invocations: ListToolInvocations, reader: AuditReader, replay: GetReplayHistory) =>
        new GetConversationTimeline(invocations, reader, replay),
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
