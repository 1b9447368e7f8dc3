import type { AppConfig } from '@toolhistory/config';
import type { DataKeyStore, Keyring } from '@toolhistory/domain';
import { checkKeyring, EnvelopeVault, FileDataKeyStore, FileKeyring } from '@toolhistory/encryption';
import { PostgresDataKeyStore } from '@toolhistory/persistence';

/** What encryption at rest runs on: the vault that seals and opens, the key store and the keyring behind it. */
export interface Encryption {
  vault: EnvelopeVault;
  keys: DataKeyStore;
  keyring: Keyring;
  /** The active key's check value was kept at this start (its first). */
  newCheckFor: string | null;
  close(): Promise<void>;
}

/**
 * The keyring and the key store the configuration names, checked against
 * each other before anything is recorded or served: a key whose material
 * is wrong, or one missing that still wraps data keys, stops start-up
 * (INVALID_CONFIG, naming the key). Null when no keyring is configured
 * (ENCRYPTION_AT_REST=off): payloads then rest in clear.
 */
export async function openEncryption(config: AppConfig, options: { migrate?: boolean } = {}): Promise<Encryption | null> {
  const { keyring: material, keyStore } = config.encryption;
  if (material === null || keyStore === null) return null;
  const keyring = new FileKeyring(material);
  const keys: DataKeyStore =
    keyStore.kind === 'file'
      ? new FileDataKeyStore(keyStore.directory)
      : await PostgresDataKeyStore.open(
          {
            url: keyStore.url,
            password: keyStore.password,
            // The key store's tables live in the schema the service's do, in their own database.
            schema: config.database.schema,
            poolSize: Math.max(2, Math.ceil(config.database.poolSize / 2)),
            applicationName: 'toolhistory-keystore',
            statementTimeoutMs: config.database.statementTimeoutMs,
            idleInTransactionTimeoutMs: config.database.idleInTransactionTimeoutMs,
          },
          { migrate: options.migrate ?? config.database.migrateOnStart },
        );
  try {
    const { recordedCheckFor } = await checkKeyring(keyring, keys);
    return { vault: new EnvelopeVault(keys, keyring), keys, keyring, newCheckFor: recordedCheckFor, close: () => keys.close() };
  } catch (error) {
    await keys.close().catch(() => undefined);
    throw error;
  }
}
