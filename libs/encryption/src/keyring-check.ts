import { createHash, timingSafeEqual } from 'node:crypto';
import type { DataKeyStore, Keyring } from '@toolhistory/domain';
import { AppError, ErrorCode } from '@toolhistory/errors';

/** A known value each key-encryption key wraps once: unwrapping it again proves the key is the same material. */
const CHECK_VALUE = createHash('sha256').update('toolhistory key-encryption key check v1').digest();
const CHECK_CONTEXT = 'toolhistory.kek-check.v1';

export interface KeyringCheck {
  /** The key whose check value was kept now, the first time it is seen active. */
  recordedCheckFor: string | null;
}

/**
 * Refuses a keyring that would lose or garble data, before anything is
 * recorded or served (INVALID_CONFIG, naming the key): a key whose
 * material differs from the key of that id that wrapped this store's data
 * keys (its check value does not unwrap), and a key that wraps data keys
 * but is missing from the keyring. The active key's check value is kept the
 * first time it is seen.
 */
export async function checkKeyring(keyring: Keyring, store: DataKeyStore): Promise<KeyringCheck> {
  const checks = await store.kekChecks();
  for (const kekId of keyring.keyIds) {
    const check = checks.get(kekId);
    if (check !== undefined && !(await unwrapsCheck(keyring, check))) {
      throw new AppError(
        ErrorCode.InvalidConfig,
        `ENCRYPTION_KEYRING_FILE: key ${kekId} is not the key ${kekId} that wrapped this key store's data keys (its check value does not unwrap); restore the right key material for ${kekId}`,
      );
    }
  }
  const { byKek } = await store.summary(new Date().toISOString());
  const missing = Object.entries(byKek).filter(([kekId, count]) => count > 0 && !keyring.keyIds.includes(kekId));
  if (missing.length > 0) {
    const [kekId, count] = missing[0];
    throw new AppError(
      ErrorCode.InvalidConfig,
      `ENCRYPTION_KEYRING_FILE: key ${kekId} wraps ${count} data key(s) in the key store but is not in the keyring; put it back (a key leaves the keyring only after \`toolhistory keys rotate\` rewrapped its data keys)`,
    );
  }
  if (checks.has(keyring.activeKeyId)) return { recordedCheckFor: null };
  const kept = await store.claimKekCheck(await keyring.wrap(CHECK_VALUE, CHECK_CONTEXT));
  if (!(await unwrapsCheck(keyring, kept)))
    throw new AppError(ErrorCode.InvalidConfig, `ENCRYPTION_KEYRING_FILE: key ${keyring.activeKeyId} does not match its check value`);
  return { recordedCheckFor: keyring.activeKeyId };
}

async function unwrapsCheck(keyring: Keyring, check: { kekId: string; wrapped: string }): Promise<boolean> {
  try {
    const value = Buffer.from(await keyring.unwrap(check, CHECK_CONTEXT));
    return value.length === CHECK_VALUE.length && timingSafeEqual(value, CHECK_VALUE);
  } catch (error) {
    if (error instanceof AppError && error.code === ErrorCode.KeyUnavailable) return false;
    throw error;
  }
}
