import { formatConsistencyToken } from '@toolhistory/contract';
import type { ConversationForker } from '@toolhistory/domain';
import { AppError, ErrorCode, checkRequestIds, requireArguments } from '@toolhistory/errors';
import { type AwaitRecorded, awaitRecordedWith, type ReadAfter, READ_MODEL } from '../consistency/await-recorded';

export interface ForkConversationCommand {
  tenantId: string;
  conversationId: string;
  upToMessageId: string;
  newConversationId: string;
  /** Fork once everything of the source through this consistency token is recorded. */
  readAfter?: ReadAfter;
}

export interface ForkedConversation {
  copiedInvocations: number;
  /** Reads of the new conversation given it include the whole fork. */
  consistencyToken: string;
}

/** ForkConversation: validate, wait for the caller's own events of the source, write the fork (source unchanged), answer a token naming its last event. */
export class ForkConversation {
  constructor(
    private readonly forker: ConversationForker | null,
    private readonly awaitRecorded?: AwaitRecorded,
  ) {}

  async execute(command: ForkConversationCommand, signal?: AbortSignal): Promise<ForkedConversation> {
    const ids = {
      tenant_id: command.tenantId,
      conversation_id: command.conversationId,
      up_to_message_id: command.upToMessageId,
      new_conversation_id: command.newConversationId,
    };
    requireArguments(ids);
    checkRequestIds(ids);
    if (command.newConversationId === command.conversationId) {
      throw new AppError(ErrorCode.InvalidArgument, 'new_conversation_id must differ from conversation_id');
    }
    if (this.forker === null) {
      throw new AppError(ErrorCode.NotSupported, 'ForkConversation needs the PostgreSQL event store (EVENT_STORE=postgres)');
    }
    await awaitRecordedWith(this.awaitRecorded, command.readAfter, READ_MODEL, signal);
    const outcome = await this.forker.fork(command);
    return {
      copiedInvocations: outcome.copiedInvocations,
      consistencyToken: formatConsistencyToken({ kind: 'position', position: BigInt(outcome.position) }),
    };
  }
}
