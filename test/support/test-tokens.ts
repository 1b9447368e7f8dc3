import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { exportJWK, generateKeyPair, type CryptoKey, type JWK, type JWTPayload, SignJWT } from 'jose';

export type TestAlgorithm = 'RS256' | 'ES256' | 'EdDSA';

export interface SigningKey {
  kid: string;
  alg: TestAlgorithm;
  privateKey: CryptoKey;
  publicJwk: JWK;
}

export async function signingKey(
  alg: TestAlgorithm,
  kid = `${alg.toLowerCase()}-${Math.random().toString(36).slice(2, 8)}`,
): Promise<SigningKey> {
  const { privateKey, publicKey } = await generateKeyPair(alg, { extractable: true, ...(alg === 'EdDSA' ? { crv: 'Ed25519' } : {}) });
  return { kid, alg, privateKey, publicJwk: { ...(await exportJWK(publicKey)), kid, alg, use: 'sig' } };
}

export const TEST_ISSUER = 'https://idp.test.invalid/';
export const TEST_AUDIENCE = 'toolhistory';

export interface TokenOptions {
  /** Seconds from now; negative for an expired token. Default one hour. */
  expiresIn?: number | null;
  notBefore?: number;
  issuer?: string;
  audience?: string;
  subject?: string;
  /** Overrides the header's alg (for a token the verifier must refuse). */
  headerAlg?: string;
}

/** A token as an identity provider would issue it: our claims plus iss, aud, sub, iat, exp. */
export async function issueToken(key: SigningKey, claims: JWTPayload, options: TokenOptions = {}): Promise<string> {
  const now = Math.floor(Date.now() / 1000);
  const jwt = new SignJWT(claims)
    .setProtectedHeader({ alg: options.headerAlg ?? key.alg, kid: key.kid, typ: 'JWT' })
    .setIssuer(options.issuer ?? TEST_ISSUER)
    .setAudience(options.audience ?? TEST_AUDIENCE)
    .setSubject(options.subject ?? 'test-worker')
    .setIssuedAt(now);
  if (options.expiresIn !== null) jwt.setExpirationTime(now + (options.expiresIn ?? 3600));
  if (options.notBefore !== undefined) jwt.setNotBefore(now + options.notBefore);
  return jwt.sign(key.privateKey);
}

/** Writes the public keys as a JWKS file in a fresh temporary directory. */
export function writeKeySet(keys: SigningKey[], path = join(mkdtempSync(join(tmpdir(), 'toolhistory-jwks-')), 'jwks.json')): string {
  writeFileSync(path, JSON.stringify({ keys: keys.map((k) => k.publicJwk) }));
  return path;
}
