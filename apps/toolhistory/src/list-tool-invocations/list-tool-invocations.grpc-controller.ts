import { Controller, Inject } from '@nestjs/common';
import { GrpcMethod } from '@nestjs/microservices';
import type { Metadata, ServerUnaryCall } from '@grpc/grpc-js';
import type { Logger } from 'pino';
import type { ListToolInvocationsRequest } from '@toolhistory/grpc-api';
import { answerUnary, budgetOf } from '../grpc/grpc-call';
import { invocationStatusOf, timestampToMillis, toInvocationMessage } from '../grpc/proto-mapping';
import { LIST_TOOL_INVOCATIONS, ROOT_LOGGER } from '../tokens';
import { DEFAULT_AUDIT_BUDGET_MS } from '../audit-budget';
import { ListToolInvocations } from './list-tool-invocations';
import { readAfterOf } from '../consistency/await-recorded';

/** ListToolInvocations: every recorded invocation of a tenant, filtered and paged. */
@Controller()
export class ListToolInvocationsGrpcController {
  private readonly log: Logger;

  constructor(
    @Inject(LIST_TOOL_INVOCATIONS) private readonly useCase: ListToolInvocations,
    @Inject(ROOT_LOGGER) logger: Logger,
  ) {
    this.log = logger.child({ component: 'grpc' });
  }

  @GrpcMethod('ToolHistory', 'ListToolInvocations')
  list(request: ListToolInvocationsRequest, _metadata: Metadata, call: ServerUnaryCall<unknown, unknown>) {
    const budget = budgetOf(call, DEFAULT_AUDIT_BUDGET_MS);
    return answerUnary(this.log, 'ListToolInvocations', { tenantId: request.tenant_id }, budget, async (signal) => {
      const page = await this.useCase.execute(
        {
          tenantId: request.tenant_id ?? '',
          conversationId: request.conversation_id,
          runId: request.run_id,
          toolName: request.tool_name,
          status: invocationStatusOf(request.status),
          from: timestampToMillis(request.from, 'from'),
          to: timestampToMillis(request.to, 'to'),
          pageSize: request.page_size,
          pageToken: request.page_token,
          readAfter: readAfterOf(request.consistency_token, budget.ms),
        },
        signal,
      );
      return { invocations: page.invocations.map(toInvocationMessage), next_page_token: page.nextPageToken };
    });
  }
}
