import { AppError, ErrorCode } from '@toolhistory/errors';
import type { Keyring, WrappedKey } from '@toolhistory/domain';
import type { KeyObject } from 'node:crypto';
import { additionalData, cipherKey, KEY_BYTES, open, seal } from './aes-gcm';

/** Key material as the configuration read it (ENCRYPTION_KEYRING_FILE): each key kept from logs until revealed here. */
export interface KeyringMaterial {
  active: string;
  keys: ReadonlyMap<string, { reveal(): Buffer }>;
}

/**
 * The keyring of a file (`{ "active": "k2", "keys": { "k1": "<32 bytes,
 * base64>", ... } }`): key-encryption keys that wrap data keys with
 * AES-256-GCM, the wrapping bound to its context. A cloud KMS would be
 * another adapter of the same port.
 */
export class FileKeyring implements Keyring {
  readonly activeKeyId: string;
  readonly keyIds: readonly string[];
  private readonly keys: ReadonlyMap<string, KeyObject>;

  constructor(material: KeyringMaterial) {
    for (const [id, key] of material.keys)
      if (key.reveal().length !== KEY_BYTES) throw new AppError(ErrorCode.InvalidConfig, `keyring: key ${id} is not ${KEY_BYTES} bytes`);
    if (!material.keys.has(material.active))
      throw new AppError(ErrorCode.InvalidConfig, `keyring: the active key ${material.active} is not among its keys`);
    this.activeKeyId = material.active;
    this.keyIds = Object.freeze([...material.keys.keys()]);
    // Key objects of copies: the configuration's bytes stay as they are (its Secret), set up once here.
    this.keys = new Map([...material.keys].map(([id, key]) => [id, cipherKey(Buffer.from(key.reveal()))]));
  }

  async wrap(dataKey: Uint8Array, context: string): Promise<WrappedKey> {
    const kek = this.keys.get(this.activeKeyId)!;
    return { kekId: this.activeKeyId, wrapped: seal(kek, dataKey, additionalData(this.activeKeyId, context)).toString('base64') };
  }

  async unwrap(key: WrappedKey, context: string): Promise<Uint8Array> {
    const kek = this.keys.get(key.kekId);
    if (kek === undefined)
      throw new AppError(ErrorCode.KeyUnavailable, `key-encryption key ${key.kekId} is not in the keyring (ENCRYPTION_KEYRING_FILE)`);
    const dataKey = open(kek, Buffer.from(key.wrapped, 'base64'), additionalData(key.kekId, context));
    if (dataKey === null)
      throw new AppError(ErrorCode.KeyUnavailable, `key-encryption key ${key.kekId} of the keyring does not unwrap a data key it should`);
    return dataKey;
  }
}
