import { jwtVerify } from 'jose';
import { LRUCache } from 'lru-cache';
import { type Caller, type CallerAuthenticator, callerFromClaims } from '@toolhistory/domain';
import { AppError, ErrorCode } from '@toolhistory/errors';
import { bearerToken, unauthenticated } from './bearer-token';
import type { KeySource } from './key-source';

/** The signature algorithms accepted; HMAC is not (a shared secret would let every verifier mint tokens). */
export const TOKEN_ALGORITHMS = ['RS256', 'ES256', 'EdDSA', 'Ed25519'];
/** Leeway on `exp` and `nbf` for clocks that disagree a little. */
export const CLOCK_TOLERANCE_SECONDS = 30;
/** A verified token is trusted again without a signature check for at most this long (and never past its expiry). */
const VERIFIED_TTL_MS = 60_000;

export interface JwtSettings {
  keys: KeySource;
  issuer: string | null;
  audience: string | null;
}

/**
 * Verifies `authorization: Bearer <JWT>` with jose: the signature against
 * the key set, `exp` (required) and `nbf` with 30 s leeway, and `iss` and
 * `aud` when configured; then reads the caller from the claims. Verified
 * tokens are remembered for up to a minute, so a turn-start call does not
 * pay for a signature check each time.
 */
export class JwtCallerAuthenticator implements CallerAuthenticator {
  private readonly verified = new LRUCache<string, Caller>({ max: 10_000, ttl: VERIFIED_TTL_MS });

  constructor(private readonly settings: JwtSettings) {
    settings.keys.onChange(() => this.verified.clear());
  }

  async authenticate(authorization: readonly string[]): Promise<Caller> {
    const token = bearerToken(authorization);
    const known = this.verified.get(token);
    if (known) return known;
    const { issuer, audience, keys } = this.settings;
    let claims;
    try {
      ({ payload: claims } = await jwtVerify(token, keys.getKey, {
        algorithms: TOKEN_ALGORITHMS,
        clockTolerance: CLOCK_TOLERANCE_SECONDS,
        requiredClaims: ['exp'],
        ...(issuer === null ? {} : { issuer }),
        ...(audience === null ? {} : { audience }),
      }));
    } catch (error) {
      throw classify(error);
    }
    const caller = callerFromClaims(claims);
    const validFor = ((claims.exp ?? 0) + CLOCK_TOLERANCE_SECONDS) * 1000 - Date.now();
    if (validFor > 0) this.verified.set(token, caller, { ttl: Math.min(VERIFIED_TTL_MS, validFor) });
    return caller;
  }
}

/** What the caller did wrong, in words that help them fix it; a failure to get keys is ours, and retriable. */
function classify(error: unknown): AppError {
  // jose's stable error codes (instanceof would tie this to one copy of the module).
  const { code, claim } = (error ?? {}) as { code?: string; claim?: string };
  switch (code) {
    case 'ERR_JWT_EXPIRED':
      return unauthenticated('token expired', error);
    case 'ERR_JWT_CLAIM_VALIDATION_FAILED':
      if (claim === 'nbf') return unauthenticated('token not yet valid', error);
      if (claim === 'iss') return unauthenticated('token issuer not accepted', error);
      if (claim === 'aud') return unauthenticated('token audience not accepted', error);
      if (claim === 'exp') return unauthenticated('token has no valid expiry (exp)', error);
      return unauthenticated(`token claim ${claim ?? ''} invalid`, error);
    case 'ERR_JWS_SIGNATURE_VERIFICATION_FAILED':
      return unauthenticated('token signature does not verify', error);
    case 'ERR_JWKS_NO_MATCHING_KEY':
      return unauthenticated('token signed with a key that is not in the key set', error);
    case 'ERR_JOSE_ALG_NOT_ALLOWED':
      return unauthenticated(`token algorithm not accepted (accepted: ${TOKEN_ALGORITHMS.join(', ')})`, error);
    case 'ERR_JWS_INVALID':
    case 'ERR_JWT_INVALID':
    case 'ERR_JOSE_NOT_SUPPORTED':
    case 'ERR_JWK_INVALID':
    case 'ERR_JWKS_MULTIPLE_MATCHING_KEYS':
      return unauthenticated('malformed token', error);
    default:
      // ERR_JWKS_TIMEOUT, ERR_JWKS_INVALID and ERR_JOSE_GENERIC (jose's word for a key set endpoint
      // that answered no 200 or no JSON), and network failures.
      return new AppError(ErrorCode.AuthUnavailable, 'tokens cannot be verified right now: the key set is unavailable', {
        cause: error,
      });
  }
}
