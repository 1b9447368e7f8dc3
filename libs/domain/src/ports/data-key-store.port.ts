import type { WrappedKey } from './keyring.port';
import type { KeyScope } from './payload-vault.port';

/** A data key as the key store keeps it: wrapped, with the scope it serves. */
export interface StoredDataKey extends KeyScope, WrappedKey {
  /** Its id in the key store (named in audit lines; never the key). */
  keyId: string;
}

/** A data key a sealer made, to be kept unless its scope has one already. */
export type NewDataKey = StoredDataKey;

/** What `retention status` shows of the key store. */
export interface KeyStoreSummary {
  /** Data keys kept, by the key-encryption key that wraps them. */
  byKek: Record<string, number>;
  /** Of those, keys with an end of retention, and keys whose end has come (the sweeper's next work). */
  expiring: number;
  due: number;
  /** The earliest end of retention among the keys, if any. */
  nextExpiry: string | null;
}

/**
 * Where wrapped data keys live, apart from the payloads they seal (a backup
 * of the payloads then holds no key). Destroying a key is final: every
 * payload sealed under it, wherever a copy rests, can no longer be read.
 * Every adapter passes test/contract/data-key-store.contract.ts.
 */
export interface DataKeyStore {
  /**
   * Keeps each new key unless its scope (tenant, conversation, expiry,
   * via) has one already; answers, in order, the key each scope has now
   * (the one kept before wins a race).
   */
  claim(keys: readonly NewDataKey[]): Promise<StoredDataKey[]>;
  /** The keys of these ids that exist (destroyed and unknown ones are absent). */
  keysById(keyIds: readonly string[]): Promise<StoredDataKey[]>;
  /** Destroys every key of the conversation and of copies of its payloads (`via`); answers their ids. */
  destroyConversation(tenantId: string, conversationId: string): Promise<string[]>;
  /** Destroys up to `limit` keys whose retention ended at or before `now`; answers them. */
  destroyExpired(now: string, limit: number): Promise<StoredDataKey[]>;
  /** Up to `limit` keys wrapped by another key-encryption key than `kekId` (for rotation). */
  wrappedWithout(kekId: string, limit: number): Promise<StoredDataKey[]>;
  /** Replaces a key's wrapping, if it is still wrapped as `from` says; answers whether it did. */
  rewrap(keyId: string, from: WrappedKey, to: WrappedKey): Promise<boolean>;
  summary(now: string): Promise<KeyStoreSummary>;
  /** The check value of each key-encryption key that ever wrapped a data key here: a known key wrapped by it. */
  kekChecks(): Promise<Map<string, WrappedKey>>;
  /** Keeps a key-encryption key's check value unless it has one; answers the one kept. */
  claimKekCheck(check: WrappedKey): Promise<WrappedKey>;
  close(): Promise<void>;
}
