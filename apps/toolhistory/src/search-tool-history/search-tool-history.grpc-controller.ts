import { Controller, Inject } from '@nestjs/common';
import { GrpcMethod } from '@nestjs/microservices';
import type { Metadata, ServerUnaryCall } from '@grpc/grpc-js';
import type { Logger } from 'pino';
import type { SearchToolHistoryRequest } from '@toolhistory/grpc-api';
import { answerUnary, budgetOf } from '../grpc/grpc-call';
import { searchMatchOf, timestampToMillis, toSearchResponse } from '../grpc/proto-mapping';
import { SEARCH_TOOL_HISTORY, ROOT_LOGGER } from '../tokens';
import { DEFAULT_AUDIT_BUDGET_MS } from '../audit-budget';
import { SearchToolHistory } from './search-tool-history';
import { readAfterOf } from '../consistency/await-recorded';

/** SearchToolHistory: search by words or by substring over a tenant's redacted payloads. */
@Controller()
export class SearchToolHistoryGrpcController {
  private readonly log: Logger;

  constructor(
    @Inject(SEARCH_TOOL_HISTORY) private readonly useCase: SearchToolHistory,
    @Inject(ROOT_LOGGER) logger: Logger,
  ) {
    this.log = logger.child({ component: 'grpc' });
  }

  // The query stays out of the log: people search for the very values they worry about.
  @GrpcMethod('ToolHistory', 'SearchToolHistory')
  search(request: SearchToolHistoryRequest, _metadata: Metadata, call: ServerUnaryCall<unknown, unknown>) {
    const budget = budgetOf(call, DEFAULT_AUDIT_BUDGET_MS);
    return answerUnary(this.log, 'SearchToolHistory', { tenantId: request.tenant_id }, budget, async (signal) =>
      toSearchResponse(
        await this.useCase.execute(
          {
            tenantId: request.tenant_id ?? '',
            query: request.query ?? '',
            conversationId: request.conversation_id,
            limit: request.limit,
            from: timestampToMillis(request.from, 'from'),
            to: timestampToMillis(request.to, 'to'),
            match: searchMatchOf(request.match),
            readAfter: readAfterOf(request.consistency_token, budget.ms),
          },
          signal,
        ),
      ),
    );
  }
}
