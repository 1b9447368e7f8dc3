import type { JWTVerifyGetKey } from 'jose';

/** Where verification keys come from: a file, or an identity provider's JWKS URL. */
export interface KeySource {
  getKey: JWTVerifyGetKey;
  /** Called when the keys change, so verified tokens are checked again. */
  onChange(listener: () => void): void;
}
