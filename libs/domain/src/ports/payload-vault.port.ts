import type { SealedPayload } from '@toolhistory/contract';

/**
 * The data key a payload is sealed under (docs/adr/033): one per
 * conversation and retention period, so erasing the conversation or ending
 * the period destroys the key and every copy of the payload with it.
 */
export interface KeyScope {
  tenantId: string;
  conversationId: string;
  /** When the key is destroyed: the payload's retention ends then; null: kept until the conversation is erased. */
  expiresAt: string | null;
  /**
   * A fork's copy of another conversation's payload: every conversation it
   * came through (the copy's `forkedFrom.via`), so that erasing any of them
   * destroys the key of the copy too; empty for a conversation's own payloads.
   */
  via: readonly string[];
}

export interface SealRequest {
  scope: KeyScope;
  /** What to seal: text (a payload's JSON text). */
  plaintext: string;
}

export interface OpenRequest {
  /** The conversation the sealed payload belongs to: a key of another one never opens it. */
  tenantId: string;
  conversationId: string;
  sealed: SealedPayload;
}

/**
 * Envelope encryption of payloads at rest: each payload sealed (AES-256-GCM)
 * under a data key of its scope, the data keys wrapped by a key-encryption
 * key and kept in a key store apart from the payloads. What is sealed is
 * the domain's to say (encryption/sealed-payloads.ts); how is the adapter's.
 */
export interface PayloadVault {
  /** Seals each plaintext under its scope's data key, made on first use; in order. */
  seal(requests: readonly SealRequest[]): Promise<SealedPayload[]>;
  /**
   * Opens each sealed payload, in order: its plaintext, or null when its
   * data key is gone (the conversation erased, the retention ended). A key
   * that exists but does not open it is an error, never a null.
   */
  open(requests: readonly OpenRequest[]): Promise<Array<string | null>>;
}
