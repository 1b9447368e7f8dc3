import type { InvocationRow, RunRow } from '../projection/read-model.types';

export interface ConversationRows {
  /** The channel the conversation was recorded with. */
  channel: string;
  runs: RunRow[];
  invocations: InvocationRow[];
}

/** Reads what replay needs of one conversation; null when the conversation is unknown. */
export interface ReplayReader {
  readConversation(tenantId: string, conversationId: string): Promise<ConversationRows | null>;
}
