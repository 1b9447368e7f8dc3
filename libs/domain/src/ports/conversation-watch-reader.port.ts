import type { ConversationKey } from '../projection/read-model-keys';
import type { WatchedConversationState } from '../watch/conversation-watch';

/** What WatchConversation reads: one conversation's rows, its event count and erasure, in one consistent read. */
export interface ConversationWatchReader {
  read(conversation: ConversationKey, signal?: AbortSignal): Promise<WatchedConversationState>;
}
