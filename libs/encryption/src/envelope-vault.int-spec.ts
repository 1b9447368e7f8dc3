import { randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import type { KeyScope } from '@toolhistory/domain';
import { EnvelopeVault } from './envelope-vault';
import { FileDataKeyStore } from './file-data-key-store';
import { FileKeyring } from './file-keyring';
import { checkKeyring } from './keyring-check';
import { rotateDataKeys } from './rotate-data-keys';

const secret = (bytes: Buffer) => ({ reveal: () => bytes });
const keyringOf = (active: string, keys: Record<string, Buffer>) =>
  new FileKeyring({ active, keys: new Map(Object.entries(keys).map(([id, key]) => [id, secret(key)])) });

describe('envelope encryption over a real key store (a directory)', () => {
  let directory: string;
  let store: FileDataKeyStore;
  const k1 = randomBytes(32);
  const k2 = randomBytes(32);

  beforeEach(() => {
    directory = mkdtempSync(join(tmpdir(), 'toolhistory-vault-'));
    store = new FileDataKeyStore(directory);
  });
  afterEach(() => rmSync(directory, { recursive: true, force: true }));

  const scope = (conversationId: string, expiresAt: string | null = null): KeyScope => ({
    tenantId: 't',
    conversationId,
    expiresAt,
    via: [],
  });

  it('opens what it sealed, the same text, byte for byte', async () => {
    const vault = new EnvelopeVault(store, keyringOf('k1', { k1 }));
    await fc.assert(
      fc.asyncProperty(fc.string({ unit: 'binary', maxLength: 2_000 }), fc.constantFrom('a', 'b', 'c'), async (text, conversationId) => {
        const [sealed] = await vault.seal([{ scope: scope(conversationId), plaintext: text }]);
        // A fresh vault (nothing remembered) reads the key from the store.
        const [opened] = await new EnvelopeVault(store, keyringOf('k1', { k1 })).open([{ tenantId: 't', conversationId, sealed }]);
        expect(opened).toBe(text);
        expect(Buffer.from(sealed.data!, 'base64').toString('utf8')).not.toContain(text.length > 8 ? text : '\u0000never');
      }),
      { numRuns: 50 },
    );
  });

  it('never gives two conversations, or two retention periods, the same data key', async () => {
    const vault = new EnvelopeVault(store, keyringOf('k1', { k1 }));
    await fc.assert(
      fc.asyncProperty(
        fc.uniqueArray(fc.string({ minLength: 1, maxLength: 12 }), { minLength: 2, maxLength: 8 }),
        async (conversations) => {
          const sealed = await vault.seal(conversations.map((c) => ({ scope: scope(c), plaintext: 'x' })));
          expect(new Set(sealed.map((s) => s.key)).size).toBe(conversations.length);
        },
      ),
      { numRuns: 30 },
    );
    const [a, b, again] = await vault.seal([
      { scope: scope('p', '2030-01-01T00:00:00.000Z'), plaintext: 'x' },
      { scope: scope('p', '2030-01-01T00:01:00.000Z'), plaintext: 'x' },
      { scope: scope('p', '2030-01-01T00:00:00.000Z'), plaintext: 'y' },
    ]);
    expect(a.key).not.toBe(b.key);
    expect(again.key).toBe(a.key);
  });

  it('refuses to open a payload with the key of another conversation', async () => {
    const vault = new EnvelopeVault(store, keyringOf('k1', { k1 }));
    const [sealed] = await vault.seal([{ scope: scope('a'), plaintext: 'secret' }]);
    await expect(vault.open([{ tenantId: 't', conversationId: 'b', sealed }])).rejects.toThrow(/another conversation/);
  });

  it('reads nothing once the key is destroyed, even with the keyring, and keeps no wrapped key on disk', async () => {
    const vault = new EnvelopeVault(store, keyringOf('k1', { k1 }));
    const [sealed] = await vault.seal([{ scope: scope('gone'), plaintext: 'ann@example.org' }]);
    const destroyed = await store.destroyConversation('t', 'gone');
    expect(destroyed).toEqual([sealed.key]);
    vault.forget(destroyed);
    expect(await new EnvelopeVault(store, keyringOf('k1', { k1 })).open([{ tenantId: 't', conversationId: 'gone', sealed }])).toEqual([
      null,
    ]);
    const files = readdirSync(join(directory, 'keys'));
    expect(files.some((f) => f.startsWith(sealed.key))).toBe(false);
  });

  it('rotates: data keys rewrapped by the new active key, payloads untouched and readable, the old key free to go', async () => {
    const before = new EnvelopeVault(store, keyringOf('k1', { k1 }));
    const sealed = await before.seal([
      { scope: scope('r1'), plaintext: 'one' },
      { scope: scope('r2', '2030-01-01T00:00:00.000Z'), plaintext: 'two' },
    ]);
    await checkKeyring(keyringOf('k1', { k1 }), store);
    const both = keyringOf('k2', { k1, k2 });
    await checkKeyring(both, store);
    const rotation = await rotateDataKeys(store, both);
    expect(rotation).toEqual({ rewrapped: 2, left: {} });
    const after = new EnvelopeVault(store, keyringOf('k2', { k2 }));
    await checkKeyring(keyringOf('k2', { k2 }), store);
    expect(
      await after.open([
        { tenantId: 't', conversationId: 'r1', sealed: sealed[0] },
        { tenantId: 't', conversationId: 'r2', sealed: sealed[1] },
      ]),
    ).toEqual(['one', 'two']);
  });

  it('refuses a keyring whose key does not match its check value, or that lacks a key still wrapping data keys, naming the key', async () => {
    const vault = new EnvelopeVault(store, keyringOf('k1', { k1 }));
    await checkKeyring(keyringOf('k1', { k1 }), store);
    await vault.seal([{ scope: scope('w'), plaintext: 'x' }]);
    await expect(checkKeyring(keyringOf('k1', { k1: randomBytes(32) }), store)).rejects.toMatchObject({
      code: 'INVALID_CONFIG',
      message: expect.stringContaining('key k1 is not the key k1'),
    });
    await expect(checkKeyring(keyringOf('k2', { k2 }), store)).rejects.toMatchObject({
      code: 'INVALID_CONFIG',
      message: expect.stringContaining('key k1 wraps 1 data key(s)'),
    });
    // The key store holds wrapped keys and check values only: no key material in clear.
    for (const dir of ['keys', 'kek-checks'])
      for (const f of readdirSync(join(directory, dir))) {
        const text = readFileSync(join(directory, dir, f));
        expect(text.includes(k1)).toBe(false);
        expect(text.toString().includes(k1.toString('base64'))).toBe(false);
      }
  });
});
