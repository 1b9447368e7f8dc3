import { Controller, Get, Inject, Param, Query } from '@nestjs/common';
import type { Logger } from 'pino';
import type { ConversationTimelineView } from '@toolhistory/console-api';
import { DEFAULT_AUDIT_BUDGET_MS } from '../audit-budget';
import { answerHttp } from '../http/answer-http';
import { CONVERSATION_TIMELINE, ROOT_LOGGER } from '../tokens';
import { ConsoleQuery } from '../console/console-query';
import type { GetConversationTimeline } from './get-conversation-timeline';

/** A conversation's invocations as stored, each with what replay makes of it at `asOf` (default now). */
@Controller('api/v1/tenants/:tenant/conversations/:conversation')
export class ConversationTimelineHttpController {
  private readonly log: Logger;

  constructor(
    @Inject(CONVERSATION_TIMELINE) private readonly timeline: GetConversationTimeline,
    @Inject(ROOT_LOGGER) logger: Logger,
  ) {
    this.log = logger.child({ component: 'console' });
  }

  @Get('timeline')
  get(
    @Param('tenant') tenantId: string,
    @Param('conversation') conversationId: string,
    @Query() query: Record<string, unknown>,
  ): Promise<ConversationTimelineView> {
    return answerHttp(this.log, 'timeline', { tenantId, conversationId }, DEFAULT_AUDIT_BUDGET_MS, (signal) => {
      const params = new ConsoleQuery(query);
      const asOf = params.time('asOf');
      params.check();
      return this.timeline.execute({ tenantId, conversationId, asOf }, signal);
    });
  }
}
