import type { DataKeyStore, Keyring } from '@toolhistory/domain';
import { wrapContext } from './envelope-vault';

export interface Rotation {
  /** Data keys now wrapped by the active key that were wrapped by another. */
  rewrapped: number;
  /** Data keys still wrapped by another key (changed meanwhile by another rotation, or destroyed): by key. */
  left: Record<string, number>;
}

/**
 * `toolhistory keys rotate`: every data key wrapped by another key than the
 * keyring's active one is unwrapped and wrapped again by the active key. The
 * payloads are not touched (they are sealed by the data keys, which stay the
 * same). Afterwards no data key needs the old keys, which may leave the
 * keyring (the service refuses to start while one is still needed).
 */
export async function rotateDataKeys(store: DataKeyStore, keyring: Keyring, batchSize = 500): Promise<Rotation> {
  let rewrapped = 0;
  const skipped = new Set<string>();
  for (;;) {
    const batch = (await store.wrappedWithout(keyring.activeKeyId, batchSize + skipped.size)).filter((k) => !skipped.has(k.keyId));
    if (batch.length === 0) break;
    for (const key of batch) {
      const dataKey = Buffer.from(await keyring.unwrap(key, wrapContext(key)));
      try {
        const to = await keyring.wrap(dataKey, wrapContext(key));
        if (await store.rewrap(key.keyId, key, to)) rewrapped += 1;
        else skipped.add(key.keyId);
      } finally {
        dataKey.fill(0);
      }
    }
  }
  const { byKek } = await store.summary(new Date().toISOString());
  const left = Object.fromEntries(Object.entries(byKek).filter(([kekId]) => kekId !== keyring.activeKeyId));
  return { rewrapped, left };
}
