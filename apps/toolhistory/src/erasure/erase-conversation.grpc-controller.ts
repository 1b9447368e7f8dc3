import { Controller, Inject } from '@nestjs/common';
import { GrpcMethod } from '@nestjs/microservices';
import type { Metadata, ServerUnaryCall } from '@grpc/grpc-js';
import type { Logger } from 'pino';
import type { EraseConversationRequest } from '@toolhistory/grpc-api';
import { callerOf } from '../access/callers-of-calls';
import { answerUnary, budgetOf } from '../grpc/grpc-call';
import type { ServiceMetrics } from '../observability/service-metrics';
import { ERASE_CONVERSATION, METRICS, ROOT_LOGGER } from '../tokens';
import { EraseConversation } from './erase-conversation';

const DEFAULT_ERASE_BUDGET_MS = 30_000;

/** EraseConversation: a user's right to be forgotten, with an audit line of who asked. */
@Controller()
export class EraseConversationGrpcController {
  private readonly log: Logger;

  constructor(
    @Inject(ERASE_CONVERSATION) private readonly eraseConversation: EraseConversation,
    @Inject(ROOT_LOGGER) logger: Logger,
    @Inject(METRICS) private readonly metrics: ServiceMetrics,
  ) {
    this.log = logger.child({ component: 'grpc' });
  }

  @GrpcMethod('ToolHistory', 'EraseConversation')
  erase(request: EraseConversationRequest, metadata: Metadata, call: ServerUnaryCall<unknown, unknown>) {
    const command = { tenantId: request.tenant_id ?? '', conversationId: request.conversation_id ?? '' };
    return answerUnary(this.log, 'EraseConversation', command, budgetOf(call, DEFAULT_ERASE_BUDGET_MS), async () => {
      const outcome = await this.eraseConversation.execute(command);
      // The audit line: who asked, what went, ids and counts only (the destroyed data keys by their ids in the key store).
      this.log.info({ audit: 'erasure', subject: callerOf(metadata).subject, ...command, ...outcome }, 'conversation erased');
      this.metrics.dataKeysDestroyed.inc({ reason: 'erasure' }, outcome.destroyedKeys?.length ?? 0);
      // Copies in forks made of it go with it; they count among the erased events.
      return { erased_events: outcome.erasedEvents + (outcome.erasedCopies ?? 0), erased_invocations: outcome.erasedInvocations };
    });
  }
}
