import type { ConversationEraser, ErasureOutcome, EventStore } from '@toolhistory/domain';

/**
 * Erasure when events live in another store than the read model: the
 * stream is deleted there first (no append can bring it back), then the
 * read model's rows go and its tombstone is written, which the projector
 * checks under the same lock. Repeating a half-done erasure completes it.
 */
export class EventStoreConversationEraser implements ConversationEraser {
  constructor(
    private readonly events: EventStore,
    private readonly readModel: ConversationEraser,
  ) {}

  async erase(tenantId: string, conversationId: string): Promise<ErasureOutcome> {
    const erasedEvents = await this.events.deleteStream({ tenantId, conversationId });
    const { erasedInvocations } = await this.readModel.erase(tenantId, conversationId);
    return { erasedEvents, erasedInvocations };
  }
}
