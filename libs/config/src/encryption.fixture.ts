import { type ReadConfigFile, readConfigFileFromDisk } from './config-files';

/** A keyring and a key store for specs that are about other settings: encryption at rest is on by default. */
export const KEYRING_PATH = '/etc/toolhistory/keyring.json';
export const TEST_KEYRING = { active: 'k1', keys: { k1: Buffer.alloc(32, 7).toString('base64') } };
export const ENCRYPTED_ENV = { ENCRYPTION_KEYRING_FILE: KEYRING_PATH, KEYSTORE_URL: 'file:///var/lib/toolhistory/keys' } as const;

/** The environment with a keyring and key store unless it names its own, and a reader that serves the keyring. */
export function withKeyring(
  env: Readonly<Record<string, string | undefined>>,
  readFile: ReadConfigFile = readConfigFileFromDisk,
): [Record<string, string | undefined>, ReadConfigFile] {
  const ownEncryption = ['ENCRYPTION_AT_REST', 'ENCRYPTION_KEYRING_FILE', 'KEYSTORE_URL'].some((name) => env[name] !== undefined);
  return [
    ownEncryption ? { ...env } : { ...ENCRYPTED_ENV, ...env },
    (path) => (path === KEYRING_PATH ? Buffer.from(JSON.stringify(TEST_KEYRING)) : readFile(path)),
  ];
}
