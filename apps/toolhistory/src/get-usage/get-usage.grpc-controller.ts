import { Controller, Inject } from '@nestjs/common';
import { GrpcMethod } from '@nestjs/microservices';
import type { Metadata, ServerUnaryCall } from '@grpc/grpc-js';
import type { Logger } from 'pino';
import type { GetUsageRequest } from '@toolhistory/grpc-api';
import { answerUnary, budgetOf } from '../grpc/grpc-call';
import { timestampToMillis, toUsageResponse, usageBucketOf } from '../grpc/proto-mapping';
import { GET_USAGE, ROOT_LOGGER } from '../tokens';
import { DEFAULT_AUDIT_BUDGET_MS } from '../audit-budget';
import { GetUsage } from './get-usage';

/** GetUsage: calls, errors, durations and tokens per tool and period, for billing. */
@Controller()
export class GetUsageGrpcController {
  private readonly log: Logger;

  constructor(
    @Inject(GET_USAGE) private readonly useCase: GetUsage,
    @Inject(ROOT_LOGGER) logger: Logger,
  ) {
    this.log = logger.child({ component: 'grpc' });
  }

  @GrpcMethod('ToolHistory', 'GetUsage')
  usage(request: GetUsageRequest, _metadata: Metadata, call: ServerUnaryCall<unknown, unknown>) {
    return answerUnary(this.log, 'GetUsage', { tenantId: request.tenant_id }, budgetOf(call, DEFAULT_AUDIT_BUDGET_MS), async (signal) =>
      toUsageResponse(
        await this.useCase.execute(
          {
            tenantId: request.tenant_id ?? '',
            from: timestampToMillis(request.from, 'from'),
            to: timestampToMillis(request.to, 'to'),
            bucket: usageBucketOf(request.bucket),
          },
          signal,
        ),
      ),
    );
  }
}
