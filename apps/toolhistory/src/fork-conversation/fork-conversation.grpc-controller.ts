import { Controller, Inject } from '@nestjs/common';
import { GrpcMethod } from '@nestjs/microservices';
import type { Metadata, ServerUnaryCall } from '@grpc/grpc-js';
import type { Logger } from 'pino';
import type { ForkConversationRequest } from '@toolhistory/grpc-api';
import { callerOf } from '../access/callers-of-calls';
import { answerUnary, budgetOf } from '../grpc/grpc-call';
import { FORK_CONVERSATION, ROOT_LOGGER } from '../tokens';
import { ForkConversation } from './fork-conversation';
import { readAfterOf } from '../consistency/await-recorded';

const DEFAULT_FORK_BUDGET_MS = 30_000;

/** ForkConversation: a host branching a chat, with an audit line of who copied what where. */
@Controller()
export class ForkConversationGrpcController {
  private readonly log: Logger;

  constructor(
    @Inject(FORK_CONVERSATION) private readonly forkConversation: ForkConversation,
    @Inject(ROOT_LOGGER) logger: Logger,
  ) {
    this.log = logger.child({ component: 'grpc' });
  }

  @GrpcMethod('ToolHistory', 'ForkConversation')
  fork(request: ForkConversationRequest, metadata: Metadata, call: ServerUnaryCall<unknown, unknown>) {
    const command = {
      tenantId: request.tenant_id ?? '',
      conversationId: request.conversation_id ?? '',
      upToMessageId: request.up_to_message_id ?? '',
      newConversationId: request.new_conversation_id ?? '',
    };
    const budget = budgetOf(call, DEFAULT_FORK_BUDGET_MS);
    return answerUnary(this.log, 'ForkConversation', command, budget, async (signal) => {
      const forked = await this.forkConversation.execute(
        { ...command, readAfter: readAfterOf(request.consistency_token, budget.ms) },
        signal,
      );
      // The audit line: who copied a conversation's payloads into which new one; ids and counts only.
      this.log.info(
        { audit: 'fork', subject: callerOf(metadata).subject, ...command, copiedInvocations: forked.copiedInvocations },
        'conversation forked',
      );
      return { copied_invocations: forked.copiedInvocations, consistency_token: forked.consistencyToken };
    });
  }
}
