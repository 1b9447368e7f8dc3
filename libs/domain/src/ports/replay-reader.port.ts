import type { InvocationRow, ModelResponseRow, RunRow } from '../projection/read-model.types';
import type { ReasoningState } from '../reasoning/reasoning-apart';

/** A round's response as replay reads it: the row, and its reasoning state while it still rests. */
export interface RecordedResponse extends ModelResponseRow {
  /** null: none was kept, or it is gone (its turn ended, or a rule let it go). */
  state: ReasoningState | null;
  /** What the state's reasoning items take in the model's context (counted when recorded); 0 without a state. */
  reasoningTokens: number;
}

export interface ConversationRows {
  /** The channel the conversation was recorded with. */
  channel: string;
  /** Changes whenever any of the rows below does (events applied to the conversation, or the read model rebuilt). */
  version: string;
  /** Rough size of the rows in memory, for caches that bound their size. */
  approxBytes: number;
  runs: RunRow[];
  invocations: InvocationRow[];
  /** The model's responses per round (absent: none recorded). */
  responses?: RecordedResponse[];
}

export interface ReadConversationOptions {
  /** Rows held in a cache must be confirmed current first (a consistency token was learned from the database, not the change feed). */
  verify?: boolean;
}

/**
 * Reads what replay needs of one conversation; null when the conversation is unknown.
 * A `signal` that aborts (the caller's deadline passed) cancels the query in the store.
 */
export interface ReplayReader {
  readConversation(
    tenantId: string,
    conversationId: string,
    signal?: AbortSignal,
    options?: ReadConversationOptions,
  ): Promise<ConversationRows | null>;
  /** The conversation's current version alone: a cheap check that cached rows are still current. */
  conversationVersion(tenantId: string, conversationId: string, signal?: AbortSignal): Promise<string | null>;
}
