import type { ConversationEraser, ErasureOutcome } from '@toolhistory/domain';
import { checkRequestIds, requireArguments } from '@toolhistory/errors';

export interface EraseConversationCommand {
  tenantId: string;
  conversationId: string;
}

/** Erasure on request (a user's right to be forgotten): both ids are required, nothing is guessed. */
export class EraseConversation {
  constructor(private readonly eraser: ConversationEraser) {}

  execute(command: EraseConversationCommand): Promise<ErasureOutcome> {
    requireArguments({ tenant_id: command.tenantId, conversation_id: command.conversationId });
    checkRequestIds({ tenant_id: command.tenantId, conversation_id: command.conversationId });
    return this.eraser.erase(command.tenantId, command.conversationId);
  }
}
