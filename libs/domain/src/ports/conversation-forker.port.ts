import type { GlobalPosition } from './event-store.port';

export interface ForkRequest {
  tenantId: string;
  conversationId: string;
  /** A message of the source: its events' userMessageId or a RunCompleted's assistantMessageId. */
  upToMessageId: string;
  newConversationId: string;
}

export interface ForkOutcome {
  /** Invocations the fork holds. */
  copiedInvocations: number;
  /** The global position of the fork's last event: a read that waits for it sees the whole fork. */
  position: GlobalPosition;
}

/**
 * Writes a fork (domain/fork/plan-fork.ts) as the new conversation's own
 * events, with its read model, at once. NOT_FOUND: the source or its
 * message is unknown; ALREADY_EXISTS: the new conversation holds anything
 * but this same fork (a repeat answers the fork as it stands).
 */
export interface ConversationForker {
  fork(request: ForkRequest): Promise<ForkOutcome>;
}
