import type { ConfigFiles } from './config-files';
import type { Settings } from './read-settings';
import { Secret } from './secret';
import type { Findings } from './security-config';

export type KeyStoreConfig = { kind: 'postgres'; url: string; password: Secret | null } | { kind: 'file'; directory: string };

export interface EncryptionConfig {
  /** Payloads rest sealed (ENCRYPTION_AT_REST=on, the default). */
  atRest: boolean;
  /** The key-encryption keys, by id, and the active one; null while encryption at rest is off (unless given, to open what was sealed). */
  keyring: { active: string; keys: ReadonlyMap<string, Secret<Buffer>> } | null;
  /** Where wrapped data keys live; null while encryption at rest is off. */
  keyStore: KeyStoreConfig | null;
  retentionSweepIntervalMs: number;
}

const KEY_BYTES = 32;
const KEY_ID = /^[A-Za-z0-9._-]{1,64}$/;

/**
 * Secure by default: payloads rest sealed unless ENCRYPTION_AT_REST=off
 * says otherwise (a warning then, at every start). Sealed, they need a
 * keyring and a key store apart from the payloads' database; the keyring's
 * problems name the key.
 */
export function encryptionConfig(settings: Settings, files: ConfigFiles, findings: Findings): EncryptionConfig {
  const { values, given } = settings;
  const atRest = values.ENCRYPTION_AT_REST === 'on';
  const base = { atRest, keyring: null, keyStore: null, retentionSweepIntervalMs: values.RETENTION_SWEEP_INTERVAL };
  if (!atRest) {
    findings.warnings.push(
      'ENCRYPTION_AT_REST=off: payloads rest in clear in the event store and the read model, erasure cannot reach their copies in backups, and retention is not enforced',
    );
    // Payloads sealed before are still opened when the keyring and the key store are given.
    if (given.ENCRYPTION_KEYRING_FILE === undefined || given.KEYSTORE_URL === undefined) return base;
    return {
      ...base,
      keyring: readKeyring(files, values.ENCRYPTION_KEYRING_FILE, findings.problems),
      keyStore: keyStoreOf(settings, files, findings),
    };
  }
  if (given.ENCRYPTION_KEYRING_FILE === undefined)
    findings.problems.push(
      'ENCRYPTION_KEYRING_FILE is required while ENCRYPTION_AT_REST is on (the default): a JSON keyring { "active": "k1", "keys": { "k1": "<32 random bytes, base64>" } }; or set ENCRYPTION_AT_REST=off to keep payloads in clear',
    );
  if (given.KEYSTORE_URL === undefined)
    findings.problems.push(
      "KEYSTORE_URL is required while ENCRYPTION_AT_REST is on (the default): postgres://… (a database apart from DATABASE_URL's) or file:///path (a directory)",
    );
  const keyring = readKeyring(files, values.ENCRYPTION_KEYRING_FILE, findings.problems);
  const keyStore = keyStoreOf(settings, files, findings);
  return { ...base, keyring, keyStore };
}

function readKeyring(files: ConfigFiles, path: string | undefined, problems: string[]): EncryptionConfig['keyring'] {
  const content = files.bytes('ENCRYPTION_KEYRING_FILE', path);
  if (content === null) return null;
  const problem = (text: string) => problems.push(`ENCRYPTION_KEYRING_FILE: ${text}`);
  let document: unknown;
  try {
    document = JSON.parse(content.toString('utf8'));
  } catch {
    problem(`${path} is not JSON (expected { "active": "k1", "keys": { "k1": "<32 bytes, base64>" } })`);
    return null;
  }
  if (typeof document !== 'object' || document === null || Array.isArray(document)) {
    problem('must be a JSON object with "active" and "keys"');
    return null;
  }
  const { active, keys, ...rest } = document as Record<string, unknown>;
  for (const key of Object.keys(rest)) problem(`unknown member "${key}" (expected active, keys)`);
  if (typeof keys !== 'object' || keys === null || Array.isArray(keys) || Object.keys(keys).length === 0) {
    problem('"keys" must be an object of key ids to keys (32 bytes, base64), with at least one key');
    return null;
  }
  const material = new Map<string, Secret<Buffer>>();
  for (const [id, value] of Object.entries(keys as Record<string, unknown>)) {
    if (!KEY_ID.test(id)) {
      problem(`key id ${JSON.stringify(id)} must be 1 to 64 letters, digits, dots, dashes or underscores`);
      continue;
    }
    const bytes = typeof value === 'string' && /^[A-Za-z0-9+/]+={0,2}$/.test(value) ? Buffer.from(value, 'base64') : null;
    if (bytes === null || bytes.length !== KEY_BYTES) {
      problem(`key ${id} must be ${KEY_BYTES} bytes in base64${bytes === null ? '' : ` (it holds ${bytes.length})`}`);
      continue;
    }
    material.set(id, new Secret(bytes));
  }
  if (typeof active !== 'string') problem('"active" must name the key that wraps new data keys');
  else if (!Object.hasOwn(keys, active))
    problem(`the active key ${JSON.stringify(active)} is not among the keys (${Object.keys(keys).join(', ')})`);
  if (typeof active !== 'string' || !material.has(active)) return null;
  return { active, keys: material };
}

function keyStoreOf({ values }: Settings, files: ConfigFiles, { problems }: Findings): KeyStoreConfig | null {
  const url = values.KEYSTORE_URL;
  if (url === undefined) return null;
  if (url.startsWith('file://')) {
    if (values.KEYSTORE_PASSWORD_FILE !== undefined) problems.push('KEYSTORE_PASSWORD_FILE is set, but KEYSTORE_URL names a directory');
    return { kind: 'file', directory: decodeURIComponent(new URL(url).pathname) };
  }
  if (sameDatabase(url, values.DATABASE_URL))
    problems.push(
      "KEYSTORE_URL names the payloads' database (DATABASE_URL): the keys must live apart, so that a backup of the payloads holds no key",
    );
  let password: Secret | null = null;
  if (values.KEYSTORE_PASSWORD_FILE !== undefined) {
    if (urlPassword(url) !== '')
      problems.push('KEYSTORE_URL holds a password and KEYSTORE_PASSWORD_FILE is set: keep the password in one place (the file)');
    const text = files.text('KEYSTORE_PASSWORD_FILE', values.KEYSTORE_PASSWORD_FILE);
    password = text === null ? null : new Secret(text);
  }
  return { kind: 'postgres', url, password };
}

function urlPassword(url: string): string {
  try {
    return new URL(url).password;
  } catch {
    return '';
  }
}

/** Same server and database: host, port and database name alike. */
function sameDatabase(a: string, b: string): boolean {
  try {
    const [x, y] = [new URL(a), new URL(b)];
    const port = (u: URL) => u.port || '5432';
    const db = (u: URL) => decodeURIComponent(u.pathname.replace(/^\//, '')) || 'postgres';
    return x.hostname.toLowerCase() === y.hostname.toLowerCase() && port(x) === port(y) && db(x) === db(y);
  } catch {
    return false;
  }
}
