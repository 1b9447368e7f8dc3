import { Controller, Get, Inject, Param, Query } from '@nestjs/common';
import type { Logger } from 'pino';
import type { SearchResultsView } from '@toolhistory/console-api';
import { DEFAULT_AUDIT_BUDGET_MS } from '../audit/audit-budget';
import type { QueryAudit } from '../audit/query-audit';
import { answerHttp } from '../http/answer-http';
import { QUERY_AUDIT, ROOT_LOGGER } from '../tokens';
import { ConsoleQuery } from './console-query';
import { toInvocationView } from './console-views';

/** Full-text search over the tenant's tool history (the SearchToolHistory rules). */
@Controller('api/v1/tenants/:tenant')
export class SearchToolHistoryHttpController {
  private readonly log: Logger;

  constructor(
    @Inject(QUERY_AUDIT) private readonly audit: QueryAudit,
    @Inject(ROOT_LOGGER) logger: Logger,
  ) {
    this.log = logger.child({ component: 'console' });
  }

  @Get('search')
  search(@Param('tenant') tenantId: string, @Query() query: Record<string, unknown>): Promise<SearchResultsView> {
    return answerHttp(this.log, 'search', { tenantId }, DEFAULT_AUDIT_BUDGET_MS, async (signal) => {
      const params = new ConsoleQuery(query);
      const request = {
        tenantId,
        query: params.text('q') ?? '',
        conversationId: params.text('conversation'),
        from: params.time('from'),
        to: params.time('to'),
        limit: params.wholeNumber('limit'),
      };
      params.check();
      const hits = await this.audit.search(request, signal);
      return { hits: hits.map((hit) => ({ invocation: toInvocationView(hit.invocation), score: hit.score, snippet: hit.snippet })) };
    });
  }
}
