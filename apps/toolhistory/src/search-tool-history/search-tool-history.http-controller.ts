import { Controller, Get, Inject, Param, Query } from '@nestjs/common';
import type { Logger } from 'pino';
import type { SearchResultsView } from '@toolhistory/console-api';
import type { SearchMatch } from '@toolhistory/domain';
import { DEFAULT_AUDIT_BUDGET_MS } from '../audit-budget';
import type { SearchToolHistory } from './search-tool-history';
import { answerHttp } from '../http/answer-http';
import { SEARCH_TOOL_HISTORY, ROOT_LOGGER } from '../tokens';
import { ConsoleQuery } from '../console/console-query';
import { toInvocationView } from '../console/console-views';

const SEARCH_MATCHES: readonly SearchMatch[] = ['words', 'substring'];

/** Search over the tenant's tool history, by words or substring (the SearchToolHistory rules). */
@Controller('api/v1/tenants/:tenant')
export class SearchToolHistoryHttpController {
  private readonly log: Logger;

  constructor(
    @Inject(SEARCH_TOOL_HISTORY) private readonly useCase: SearchToolHistory,
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
        match: params.oneOf('match', SEARCH_MATCHES),
      };
      params.check();
      const hits = await this.useCase.execute(request, signal);
      return {
        hits: hits.map((hit) => ({
          invocation: toInvocationView(hit.invocation),
          score: hit.score,
          snippet: hit.snippet,
          matchedIn: hit.matchedIn,
        })),
      };
    });
  }
}
