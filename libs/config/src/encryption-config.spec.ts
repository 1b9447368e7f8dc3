import { inspect } from 'node:util';
import { AppError } from '@toolhistory/errors';
import { loadConfig } from './load-config';

const KEY = Buffer.alloc(32, 1).toString('base64');
const keyring = (document: unknown) => (path: string) => {
  if (path === '/keys/keyring.json') return Buffer.from(typeof document === 'string' ? document : JSON.stringify(document));
  if (path === '/keys/password') return Buffer.from('s3cret\n');
  throw Object.assign(new Error(`ENOENT: ${path}`), { code: 'ENOENT' });
};
const ENCRYPTED = { ENCRYPTION_KEYRING_FILE: '/keys/keyring.json', KEYSTORE_URL: 'file:///var/lib/toolhistory/keys' };

const problemsOf = (env: Record<string, string>, document: unknown = { active: 'k1', keys: { k1: KEY } }): string[] => {
  try {
    loadConfig(env, keyring(document));
  } catch (error) {
    if (error instanceof AppError) return error.details.problems as string[];
    throw error;
  }
  return [];
};

describe('encryption at rest settings', () => {
  it('is on by default: without a keyring and a key store the service does not start, and says how to go on', () => {
    expect(problemsOf({})).toEqual([
      'ENCRYPTION_KEYRING_FILE is required while ENCRYPTION_AT_REST is on (the default): a JSON keyring { "active": "k1", "keys": { "k1": "<32 random bytes, base64>" } }; or set ENCRYPTION_AT_REST=off to keep payloads in clear',
      "KEYSTORE_URL is required while ENCRYPTION_AT_REST is on (the default): postgres://… (a database apart from DATABASE_URL's) or file:///path (a directory)",
    ]);
  });

  it('reads the keyring and the key store, keeping the keys out of every log line', () => {
    const config = loadConfig(
      { ...ENCRYPTED, ENCRYPTION_KEYRING_FILE: '/keys/keyring.json' },
      keyring({ active: 'k2', keys: { k1: KEY, k2: Buffer.alloc(32, 2).toString('base64') } }),
    );
    expect(config.encryption.atRest).toBe(true);
    expect(config.encryption.keyring?.active).toBe('k2');
    expect([...config.encryption.keyring!.keys.keys()]).toEqual(['k1', 'k2']);
    expect(config.encryption.keyring!.keys.get('k2')!.reveal()).toEqual(Buffer.alloc(32, 2));
    expect(config.encryption.keyStore).toEqual({ kind: 'file', directory: '/var/lib/toolhistory/keys' });
    expect(config.encryption.retentionSweepIntervalMs).toBe(60_000);
    const shown = `${JSON.stringify(config)} ${inspect(config, { depth: 10 })}`;
    expect(shown).not.toContain(KEY);
    expect(shown).not.toContain(Buffer.alloc(32, 2).toString('base64'));
  });

  it('names the key whose material is unusable, and the keyring that names no usable active key', () => {
    expect(problemsOf(ENCRYPTED, { active: 'k2', keys: { k1: KEY, k2: Buffer.alloc(16).toString('base64'), 'bad id': KEY } })).toEqual([
      'ENCRYPTION_KEYRING_FILE: key k2 must be 32 bytes in base64 (it holds 16)',
      'ENCRYPTION_KEYRING_FILE: key id "bad id" must be 1 to 64 letters, digits, dots, dashes or underscores',
    ]);
    expect(problemsOf(ENCRYPTED, { active: 'k9', keys: { k1: KEY } })).toEqual([
      'ENCRYPTION_KEYRING_FILE: the active key "k9" is not among the keys (k1)',
    ]);
    expect(problemsOf(ENCRYPTED, '{ not json')).toEqual([
      'ENCRYPTION_KEYRING_FILE: /keys/keyring.json is not JSON (expected { "active": "k1", "keys": { "k1": "<32 bytes, base64>" } })',
    ]);
    expect(problemsOf(ENCRYPTED, { keys: {} })).toEqual([
      'ENCRYPTION_KEYRING_FILE: "keys" must be an object of key ids to keys (32 bytes, base64), with at least one key',
    ]);
    expect(problemsOf({ ...ENCRYPTED, ENCRYPTION_KEYRING_FILE: '/keys/missing.json' })).toEqual([
      'ENCRYPTION_KEYRING_FILE: cannot read /keys/missing.json (ENOENT)',
    ]);
  });

  it("keeps the key store apart from the payloads' database", () => {
    const url = 'postgres://th@db.internal:5432/toolhistory';
    expect(problemsOf({ ...ENCRYPTED, DATABASE_URL: url, KEYSTORE_URL: 'postgres://keys@DB.internal/toolhistory' })).toEqual([
      "KEYSTORE_URL names the payloads' database (DATABASE_URL): the keys must live apart, so that a backup of the payloads holds no key",
    ]);
    const config = loadConfig(
      {
        ...ENCRYPTED,
        DATABASE_URL: url,
        KEYSTORE_URL: 'postgres://keys@keys.internal/toolhistory_keys',
        KEYSTORE_PASSWORD_FILE: '/keys/password',
      },
      keyring({ active: 'k1', keys: { k1: KEY } }),
    );
    expect(config.encryption.keyStore).toMatchObject({ kind: 'postgres', url: 'postgres://keys@keys.internal/toolhistory_keys' });
    expect(config.encryption.keyStore?.kind === 'postgres' && config.encryption.keyStore.password?.reveal()).toBe('s3cret');
  });

  it('stores payloads in clear when told so, with a warning at every start, and then needs no keys', () => {
    const config = loadConfig({ ENCRYPTION_AT_REST: 'off' });
    expect(config.encryption).toEqual({ atRest: false, keyring: null, keyStore: null, retentionSweepIntervalMs: 60_000 });
    expect(config.warnings).toContain(
      'ENCRYPTION_AT_REST=off: payloads rest in clear in the event store and the read model, erasure cannot reach their copies in backups, and retention is not enforced',
    );
  });
});
