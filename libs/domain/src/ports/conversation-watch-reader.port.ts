import type { ConversationKey } from '../projection/read-model-keys';
import type { WatchedConversationState, WatchedConversationUpdate } from '../watch/conversation-watch';

/** What WatchConversation reads: one conversation's rows, its event count and erasure, in one consistent read. */
export interface ConversationWatchReader {
  /** The snapshot: all the conversation's rows (ListToolInvocations' invocations, in its order) and runs. */
  read(conversation: ConversationKey, signal?: AbortSignal): Promise<WatchedConversationState>;
  /**
   * What followed: the events after stream position `afterPosition` up to
   * the event count the rows include, and only the rows those events touch.
   */
  readSince(conversation: ConversationKey, afterPosition: number): Promise<WatchedConversationUpdate>;
}
