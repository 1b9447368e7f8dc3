import { type KeyObject, randomUUID } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import type { SealedPayload } from '@toolhistory/contract';
import type {
  DataKeyStore,
  Keyring,
  KeyScope,
  NewDataKey,
  OpenRequest,
  PayloadVault,
  SealRequest,
  StoredDataKey,
} from '@toolhistory/domain';
import { AppError, ErrorCode } from '@toolhistory/errors';
import { additionalData, cipherKey, newKey, open, seal } from './aes-gcm';

export interface EnvelopeVaultOptions {
  /** Unwrapped data keys kept in memory, at most (32 bytes each, and their scope). */
  cachedKeys?: number;
  /** How long an unwrapped data key stays in memory after its last use. */
  cacheTtlMs?: number;
}

interface DataKey {
  keyId: string;
  tenantId: string;
  conversationId: string;
  expiresAt: string | null;
  key: KeyObject;
}

/** What a data key serves, as one string: the key store keeps one key per scope. */
export const scopeKey = (scope: KeyScope): string =>
  JSON.stringify([
    scope.tenantId,
    scope.conversationId,
    scope.expiresAt === null ? null : new Date(scope.expiresAt).toISOString(),
    [...scope.via],
  ]);

/** What a data key's wrapping is bound to: it unwraps for this key id and conversation only. */
export const wrapContext = (key: Pick<StoredDataKey, 'keyId' | 'tenantId' | 'conversationId'>): string =>
  ['toolhistory.data-key.v1', key.keyId, key.tenantId, key.conversationId].join('\u0000');

/** What a sealed payload is bound to: its conversation and the key's id (AES-GCM's additional data). */
const payloadContext = (tenantId: string, conversationId: string, keyId: string): Buffer =>
  additionalData('toolhistory.payload.v1', tenantId, conversationId, keyId);

/**
 * Envelope encryption (docs/adr/033): a payload is sealed with AES-256-GCM
 * under a data key of its scope (conversation, end of retention, and for a
 * fork's copy where it came from); the data key, wrapped by the keyring's
 * active key, is kept in the key store, made on first use. Unwrapped keys
 * stay in memory for a while (bounded; node:crypto key objects, their bytes
 * released when dropped): the store is asked once per key, not per payload.
 */
export class EnvelopeVault implements PayloadVault {
  /** Unwrapped keys by id, zeroed when they leave; and the id of each scope's key. */
  private readonly byId: LRUCache<string, DataKey>;
  private readonly idOfScope: LRUCache<string, string>;

  constructor(
    private readonly store: DataKeyStore,
    private readonly keyring: Keyring,
    options: EnvelopeVaultOptions = {},
  ) {
    const bounds = { max: options.cachedKeys ?? 100_000, ttl: options.cacheTtlMs ?? 10 * 60_000, updateAgeOnGet: true };
    this.byId = new LRUCache<string, DataKey>(bounds);
    this.idOfScope = new LRUCache<string, string>(bounds);
  }

  async seal(requests: readonly SealRequest[]): Promise<SealedPayload[]> {
    const keys = await this.keysFor(requests.map((r) => r.scope));
    return requests.map(({ scope, plaintext }) => {
      const key = keys.get(scopeKey(scope))!;
      const data = seal(key.key, Buffer.from(plaintext, 'utf8'), payloadContext(scope.tenantId, scope.conversationId, key.keyId));
      return { key: key.keyId, expiresAt: scope.expiresAt, data: data.toString('base64') };
    });
  }

  async open(requests: readonly OpenRequest[]): Promise<Array<string | null>> {
    const keys = await this.keysById([...new Set(requests.filter((r) => r.sealed.data !== undefined).map((r) => r.sealed.key))]);
    return requests.map(({ tenantId, conversationId, sealed }) => {
      const key = keys.get(sealed.key);
      // Without its bytes there is nothing to open: the payload was gone when it was written (a fork's copy).
      if (key === undefined || sealed.data === undefined) return null;
      if (key.tenantId !== tenantId || key.conversationId !== conversationId)
        throw new AppError(ErrorCode.Internal, `data key ${sealed.key} belongs to another conversation than the payload naming it`);
      const plaintext =
        sealed.data === undefined
          ? null
          : open(key.key, Buffer.from(sealed.data, 'base64'), payloadContext(tenantId, conversationId, key.keyId));
      if (plaintext === null) throw new AppError(ErrorCode.Internal, `a payload sealed under data key ${sealed.key} does not open with it`);
      return plaintext.toString('utf8');
    });
  }

  /** Drops destroyed keys from memory at once (erasure, expiry in this process). */
  forget(keyIds: readonly string[]): void {
    for (const id of keyIds) this.byId.delete(id);
  }

  private remember(scope: KeyScope, key: DataKey): void {
    this.byId.set(key.keyId, key);
    this.idOfScope.set(scopeKey(scope), key.keyId);
  }

  /** The data key of each scope: remembered, kept in the store, or made now (a racing maker's key wins). */
  private async keysFor(scopes: readonly KeyScope[]): Promise<Map<string, DataKey>> {
    const found = new Map<string, DataKey>();
    const missing = new Map<string, KeyScope>();
    for (const scope of scopes) {
      const id = scopeKey(scope);
      const keyId = this.idOfScope.get(id);
      const known = keyId === undefined ? undefined : this.byId.get(keyId);
      if (known) found.set(id, known);
      else missing.set(id, scope);
    }
    if (missing.size === 0) return found;
    const ours = new Map<string, Buffer>();
    const made = await Promise.all(
      [...missing.values()].map(async (scope): Promise<NewDataKey> => {
        const keyId = randomUUID();
        const key = newKey();
        ours.set(keyId, key);
        const wrapped = await this.keyring.wrap(key, wrapContext({ keyId, ...scope }));
        return { keyId, ...scope, via: [...scope.via], ...wrapped };
      }),
    );
    try {
      const kept = await this.store.claim(made);
      for (const stored of kept) {
        // Ours was kept: no need to unwrap what we just wrapped. A racer's won: unwrap it.
        const own = ours.get(stored.keyId);
        const key = own
          ? {
              keyId: stored.keyId,
              tenantId: stored.tenantId,
              conversationId: stored.conversationId,
              expiresAt: stored.expiresAt,
              key: cipherKey(own),
            }
          : await this.unwrapped(stored);
        ours.delete(stored.keyId);
        this.remember(stored, key);
        found.set(scopeKey(stored), key);
      }
      return found;
    } finally {
      // Keys made and not kept (a racer's was) leave no copy in memory.
      for (const key of ours.values()) key.fill(0);
    }
  }

  private async keysById(keyIds: readonly string[]): Promise<Map<string, DataKey>> {
    const found = new Map<string, DataKey>();
    const missing: string[] = [];
    for (const id of keyIds) {
      const known = this.byId.get(id);
      if (known) found.set(id, known);
      else missing.push(id);
    }
    if (missing.length === 0) return found;
    for (const stored of await this.store.keysById(missing)) {
      const key = await this.unwrapped(stored);
      this.remember(stored, key);
      found.set(stored.keyId, key);
    }
    return found;
  }

  private async unwrapped(stored: StoredDataKey): Promise<DataKey> {
    const key = cipherKey(await this.keyring.unwrap(stored, wrapContext(stored)));
    return { keyId: stored.keyId, tenantId: stored.tenantId, conversationId: stored.conversationId, expiresAt: stored.expiresAt, key };
  }
}
