import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Pool } from 'pg';
import type { StoredToolEvent } from '../../libs/contract/src';
import { openEvents, withoutSealNote } from '../../libs/domain/src';
import { EnvelopeVault, FileDataKeyStore, FileKeyring } from '../../libs/encryption/src';

/** Where the tests keep their keyring and key stores: the project's .cache, never the repository. */
const TEST_KEYS_ROOT = resolve(__dirname, '../../.cache/test/encryption');

/** A keyring of the tests' own, made once (a random key), shared by every test that names no other. */
export function testKeyringFile(): string {
  mkdirSync(TEST_KEYS_ROOT, { recursive: true, mode: 0o700 });
  const path = join(TEST_KEYS_ROOT, 'keyring.json');
  try {
    writeFileSync(path, JSON.stringify({ active: 'k1', keys: { k1: randomBytes(32).toString('base64') } }), { mode: 0o600, flag: 'wx' });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  }
  return path;
}

/** A key store directory per database schema, so tests that share the database never share keys. */
export function testKeyStoreDirectory(schema: string): string {
  return join(TEST_KEYS_ROOT, 'keystores', schema);
}

/** Encryption at rest as every test service runs it (the default): the tests' keyring and the schema's key store. */
export function testEncryptionEnvironment(schema: string): Record<string, string> {
  return { ENCRYPTION_KEYRING_FILE: testKeyringFile(), KEYSTORE_URL: `file://${testKeyStoreDirectory(schema)}` };
}

/** A keyring file of the given keys (each 32 bytes), for tests that rotate or break keys. */
export function writeKeyring(path: string, active: string, keys: Record<string, Buffer>): string {
  writeFileSync(
    path,
    JSON.stringify({ active, keys: Object.fromEntries(Object.entries(keys).map(([id, k]) => [id, k.toString('base64')])) }),
    {
      mode: 0o600,
    },
  );
  return path;
}

export function removeTestKeyStore(schema: string): void {
  rmSync(testKeyStoreDirectory(schema), { recursive: true, force: true });
}

/**
 * Every event of the schema with its sealed payload opened (the tests' keyring,
 * the schema's key store): what a reader of the events table holding both
 * could see. An event whose key is gone reads as expired.
 */
export async function eventsInClear(pool: Pool, schema: string): Promise<Array<{ conversationId: string; text: string }>> {
  const { rows } = await pool.query<{ payload: StoredToolEvent }>('SELECT payload FROM events ORDER BY global_position');
  const opened = await openEvents(
    rows.map((r) => r.payload),
    testVault(schema),
  );
  return opened.map((event) => ({ conversationId: event.conversationId, text: JSON.stringify(withoutSealNote(event)) }));
}

/** A vault over the tests' keyring and a schema's key store: what the test services seal with. */
export function testVault(schema: string): EnvelopeVault {
  const keyring = JSON.parse(readFileSync(testKeyringFile(), 'utf8')) as { active: string; keys: Record<string, string> };
  return new EnvelopeVault(
    new FileDataKeyStore(testKeyStoreDirectory(schema)),
    new FileKeyring({
      active: keyring.active,
      keys: new Map(Object.entries(keyring.keys).map(([id, key]) => [id, { reveal: () => Buffer.from(key, 'base64') }])),
    }),
  );
}

/** The test vault of the schema a pool works in. */
export async function testVaultOf(pool: Pool): Promise<EnvelopeVault> {
  const { rows } = await pool.query<{ schema: string }>('SELECT current_schema() AS schema');
  return testVault(rows[0].schema);
}
