export interface ErasureOutcome {
  erasedEvents: number;
  erasedInvocations: number;
  /** Copies of the conversation's events removed from forks made of it (docs/adr/026). */
  erasedCopies?: number;
  /** The forks made of it, each left with what it recorded itself. */
  forks?: string[];
  /** The ids, in the key store, of the data keys destroyed with it (crypto-shredding, docs/adr/033); never the keys. */
  destroyedKeys?: string[];
}

/**
 * Removes a conversation from the event store and the read model, leaving
 * a tombstone so that no later or redelivered event of it is recorded.
 * Erasing twice (or a conversation never seen) is not an error.
 */
export interface ConversationEraser {
  erase(tenantId: string, conversationId: string): Promise<ErasureOutcome>;
}
