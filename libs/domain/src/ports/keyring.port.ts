/** A data key wrapped by a key-encryption key: which one, and the wrapped bytes (base64). */
export interface WrappedKey {
  kekId: string;
  wrapped: string;
}

/**
 * The key-encryption keys (KEKs) that wrap data keys: a file of keys today,
 * a cloud KMS as another adapter. Unwrapping checks the key (AES-GCM's
 * tag), so wrong key material is an error naming the key, never garbage.
 */
export interface Keyring {
  /** The key new data keys are wrapped with. */
  readonly activeKeyId: string;
  /** Every key it can unwrap with, the active one among them. */
  readonly keyIds: readonly string[];
  /** Wraps with the active key; `context` is bound to the result (the same must be given to unwrap). */
  wrap(dataKey: Uint8Array, context: string): Promise<WrappedKey>;
  /** Fails with KEY_UNAVAILABLE, naming the key, when it is not in the keyring or does not unwrap. */
  unwrap(key: WrappedKey, context: string): Promise<Uint8Array>;
}
