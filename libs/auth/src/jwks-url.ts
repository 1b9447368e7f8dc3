import { createRemoteJWKSet, type JWTVerifyGetKey } from 'jose';
import type { KeySource } from './key-source';

export interface JwksUrlLog {
  warn(fields: object, message: string): void;
}

/**
 * An identity provider's JWKS endpoint (`AUTH_JWKS_URL`), through jose's
 * remote key set: fetched once, cached for ten minutes, and fetched again at
 * once (at most every 30 s) when a token names a key it does not hold, which
 * is how a rotation shows.
 */
export class JwksUrl implements KeySource {
  private readonly remote: ReturnType<typeof createRemoteJWKSet>;

  constructor(url: string, { cooldownMs = 30_000, timeoutMs = 5_000 } = {}) {
    this.remote = createRemoteJWKSet(new URL(url), { timeoutDuration: timeoutMs, cooldownDuration: cooldownMs, cacheMaxAge: 600_000 });
  }

  /** Fetches the keys now, so the first call does not wait; a failure is only logged (callers then get UNAVAILABLE until it answers). */
  async warmUp(log: JwksUrlLog): Promise<void> {
    try {
      await this.remote.reload();
    } catch (error) {
      log.warn(
        { reason: error instanceof Error ? error.message : String(error) },
        'key set not fetched at start-up; retrying as tokens arrive',
      );
    }
  }

  readonly getKey: JWTVerifyGetKey = (header, token) => this.remote(header, token);

  onChange(): void {
    // jose swaps fetched keys in place; verified tokens expire from the cache within a minute.
  }
}
