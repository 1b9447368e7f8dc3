import { randomUUID } from 'node:crypto';
import type { DataKeyStore, NewDataKey } from '../../libs/domain/src';
import { uniqueName } from '../support/test-environment';

/**
 * The behaviour every DataKeyStore adapter must have (docs/adr/033): one
 * key per scope however callers race, keys found by id until destroyed,
 * destruction by conversation (copies in forks included) and by end of
 * retention, rewrapping for rotation, and the keyring's check values.
 * Every test works in tenants of its own, so the suite can share a store.
 */
export interface DataKeyStoreHarness {
  store: DataKeyStore;
  close(): Promise<void>;
}

export function describeDataKeyStoreContract(adapter: string, open: () => Promise<DataKeyStoreHarness>): void {
  describe(`DataKeyStore contract: ${adapter}`, () => {
    let harness: DataKeyStoreHarness;
    let store: DataKeyStore;

    beforeAll(async () => {
      harness = await open();
      store = harness.store;
    });
    afterAll(() => harness?.close());

    const newKey = (scope: Partial<NewDataKey> = {}): NewDataKey => ({
      keyId: randomUUID(),
      tenantId: uniqueName('tenant'),
      conversationId: uniqueName('conv'),
      expiresAt: null,
      via: [],
      kekId: 'k1',
      wrapped: Buffer.from(randomUUID()).toString('base64'),
      ...scope,
    });
    const ids = (keys: ReadonlyArray<{ keyId: string }>) => keys.map((k) => k.keyId).sort();

    it('keeps one key per scope: a second claim, or a racing one, gets the key kept first', async () => {
      const first = newKey();
      const [kept] = await store.claim([first]);
      expect(kept).toMatchObject({ tenantId: first.tenantId, conversationId: first.conversationId, expiresAt: null, via: [], kekId: 'k1' });
      expect(kept.wrapped).toBe(first.wrapped);
      const [again] = await store.claim([{ ...newKey(), tenantId: first.tenantId, conversationId: first.conversationId }]);
      expect(again).toEqual(kept);
      const racers = await Promise.all(
        Array.from({ length: 8 }, () => store.claim([{ ...newKey(), tenantId: first.tenantId, conversationId: 'race' }])),
      );
      expect(new Set(racers.map(([k]) => k.keyId)).size).toBe(1);
      expect(await store.keysById([kept.keyId, 'unknown-id'])).toEqual([kept]);
    });

    it('keeps keys apart by end of retention and by where a copy came from, in one claim', async () => {
      const base = newKey();
      const scopes = [
        base,
        { ...newKey(), tenantId: base.tenantId, conversationId: base.conversationId, expiresAt: '2030-01-01T00:00:00.000Z' },
        { ...newKey(), tenantId: base.tenantId, conversationId: base.conversationId, expiresAt: '2030-01-01T01:00:00.000Z' },
        { ...newKey(), tenantId: base.tenantId, conversationId: base.conversationId, via: ['source'] },
      ];
      const kept = await store.claim(scopes);
      expect(new Set(kept.map((k) => k.keyId)).size).toBe(4);
      expect(kept.map((k) => [k.expiresAt, k.via])).toEqual(scopes.map((s) => [s.expiresAt, s.via]));
      expect(ids(await store.keysById(kept.map((k) => k.keyId)))).toEqual(ids(kept));
    });

    it("destroys a conversation's keys, and the keys of copies of its payloads in forks, and nothing else", async () => {
      const source = newKey();
      const sameTenant = { tenantId: source.tenantId };
      const [own, ownLater, copy, copyOfCopy, forkOwn, other] = await store.claim([
        source,
        { ...newKey(sameTenant), conversationId: source.conversationId, expiresAt: '2031-01-01T00:00:00.000Z' },
        newKey({ ...sameTenant, conversationId: 'fork-1', via: [source.conversationId] }),
        newKey({ ...sameTenant, conversationId: 'fork-2', via: ['fork-1', source.conversationId] }),
        newKey({ ...sameTenant, conversationId: 'fork-1' }),
        newKey({ conversationId: source.conversationId }),
      ]);
      const destroyed = await store.destroyConversation(source.tenantId, source.conversationId);
      expect(destroyed.sort()).toEqual(ids([own, ownLater, copy, copyOfCopy]));
      expect(ids(await store.keysById([own, ownLater, copy, copyOfCopy, forkOwn, other].map((k) => k.keyId)))).toEqual(
        ids([forkOwn, other]),
      );
      expect(await store.destroyConversation(source.tenantId, source.conversationId)).toEqual([]);
    });

    it('destroys keys whose retention ended, up to a limit, and answers them', async () => {
      const tenant = { tenantId: uniqueName('tenant') };
      const [past1, past2, future, never] = await store.claim([
        newKey({ ...tenant, expiresAt: '2001-01-01T00:00:00.000Z' }),
        newKey({ ...tenant, expiresAt: '2001-01-02T00:00:00.000Z' }),
        newKey({ ...tenant, expiresAt: '2999-01-01T00:00:00.000Z' }),
        newKey(tenant),
      ]);
      const now = '2020-01-01T00:00:00.000Z';
      const destroyed: string[] = [];
      for (let round = 0; round < 100; round += 1) {
        const batch = await store.destroyExpired(now, 1);
        if (batch.length === 0) break;
        expect(batch.length).toBe(1);
        destroyed.push(...batch.filter((k) => k.tenantId === tenant.tenantId).map((k) => k.keyId));
      }
      expect(destroyed.sort()).toEqual(ids([past1, past2]));
      expect(ids(await store.keysById([past1, past2, future, never].map((k) => k.keyId)))).toEqual(ids([future, never]));
      const summary = await store.summary(now);
      expect(summary.due).toBe(0);
      expect(summary.expiring).toBeGreaterThanOrEqual(1);
    });

    it('rewraps a key only while it is wrapped as the caller read it (rotation)', async () => {
      const [key] = await store.claim([newKey({ kekId: uniqueName('old') })]);
      expect((await store.wrappedWithout('k-new', 100_000)).map((k) => k.keyId)).toContain(key.keyId);
      const to = { kekId: 'k-new', wrapped: 'bmV3' };
      expect(await store.rewrap(key.keyId, { kekId: 'someone-else', wrapped: key.wrapped }, to)).toBe(false);
      expect(await store.rewrap(key.keyId, key, to)).toBe(true);
      expect(await store.rewrap(key.keyId, key, to)).toBe(false);
      expect(await store.keysById([key.keyId])).toEqual([{ ...key, ...to }]);
      expect((await store.wrappedWithout('k-new', 100_000)).map((k) => k.keyId)).not.toContain(key.keyId);
      expect((await store.summary(new Date().toISOString())).byKek['k-new']).toBeGreaterThanOrEqual(1);
    });

    it('keeps the first check value of each key-encryption key', async () => {
      const kekId = uniqueName('kek');
      const first = await store.claimKekCheck({ kekId, wrapped: 'Zmlyc3Q=' });
      expect(first).toEqual({ kekId, wrapped: 'Zmlyc3Q=' });
      expect(await store.claimKekCheck({ kekId, wrapped: 'c2Vjb25k' })).toEqual(first);
      expect((await store.kekChecks()).get(kekId)).toEqual(first);
    });
  });
}
