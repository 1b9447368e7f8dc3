import { createCipheriv, createDecipheriv, createSecretKey, type KeyObject, randomBytes, randomFillSync } from 'node:crypto';

/** AES-256-GCM with a random 96-bit nonce and a 128-bit tag; nothing here but node:crypto's primitives, composed. */
const NONCE_BYTES = 12;
const TAG_BYTES = 16;
export const KEY_BYTES = 32;

/**
 * A key as node:crypto holds it: made once per key, since a cipher made from
 * raw bytes sets the key up anew each time (about three times the cost of a
 * 1 KB payload's encryption). The bytes given are zeroed.
 */
export function cipherKey(bytes: Uint8Array): KeyObject {
  const key = createSecretKey(bytes);
  bytes.fill(0);
  return key;
}

/**
 * Random nonces, drawn from the system's generator a few hundred at a time:
 * one call for each would cost more than the encryption of a small payload.
 * Each nonce is used once; random 96-bit nonces are GCM's standard choice.
 */
const NONCES_PER_DRAW = 512;
let nonces = Buffer.alloc(0);
let nextNonce = 0;
function freshNonce(): Buffer {
  if (nextNonce >= nonces.length) {
    nonces = randomFillSync(Buffer.allocUnsafe(NONCE_BYTES * NONCES_PER_DRAW));
    nextNonce = 0;
  }
  const nonce = Buffer.from(nonces.subarray(nextNonce, nextNonce + NONCE_BYTES));
  nonces.fill(0, nextNonce, nextNonce + NONCE_BYTES);
  nextNonce += NONCE_BYTES;
  return nonce;
}

/** nonce ‖ ciphertext ‖ tag, the additional data bound to it (never stored in it). */
export function seal(key: KeyObject | Uint8Array, plaintext: Uint8Array, additionalData: Uint8Array): Buffer {
  const nonce = freshNonce();
  const cipher = createCipheriv('aes-256-gcm', key, nonce, { authTagLength: TAG_BYTES });
  cipher.setAAD(additionalData);
  const body = Buffer.concat([cipher.update(plaintext), cipher.final()]);
  return Buffer.concat([nonce, body, cipher.getAuthTag()]);
}

/** The plaintext, or null when the key, the additional data or the bytes are not those it was sealed with. */
export function open(key: KeyObject | Uint8Array, sealed: Uint8Array, additionalData: Uint8Array): Buffer | null {
  if (sealed.length < NONCE_BYTES + TAG_BYTES) return null;
  const bytes = Buffer.from(sealed.buffer, sealed.byteOffset, sealed.byteLength);
  const decipher = createDecipheriv('aes-256-gcm', key, bytes.subarray(0, NONCE_BYTES), { authTagLength: TAG_BYTES });
  decipher.setAAD(additionalData);
  decipher.setAuthTag(bytes.subarray(bytes.length - TAG_BYTES));
  try {
    return Buffer.concat([decipher.update(bytes.subarray(NONCE_BYTES, bytes.length - TAG_BYTES)), decipher.final()]);
  } catch {
    return null;
  }
}

/** A fresh data key. */
export const newKey = (): Buffer => randomBytes(KEY_BYTES);

/** Parts joined with NUL, which none of them holds (ids are checked for control characters): unambiguous additional data. */
export const additionalData = (...parts: readonly string[]): Buffer => Buffer.from(parts.join('\u0000'), 'utf8');
