import type { ConversationEraser, DataKeyStore, ErasureOutcome } from '@toolhistory/domain';
import type { EnvelopeVault } from '@toolhistory/encryption';

/**
 * Erasure that reaches every copy (docs/adr/033): once the conversation's
 * events and rows are gone (the tombstone written), its data keys are
 * destroyed in the key store, with the keys of copies of its payloads in
 * forks, so whatever copy of its payloads remains anywhere (a backup, the
 * WAL, a replica, an event store's old chunks) can no longer be read.
 * Repeating an erasure destroys whatever key was left, so a half-done one
 * completes.
 */
export class CryptoShreddingEraser implements ConversationEraser {
  constructor(
    private readonly eraser: ConversationEraser,
    private readonly keys: DataKeyStore,
    private readonly vault: Pick<EnvelopeVault, 'forget'>,
  ) {}

  async erase(tenantId: string, conversationId: string): Promise<ErasureOutcome> {
    const outcome = await this.eraser.erase(tenantId, conversationId);
    const destroyedKeys = await this.keys.destroyConversation(tenantId, conversationId);
    this.vault.forget(destroyedKeys);
    return { ...outcome, destroyedKeys };
  }
}
