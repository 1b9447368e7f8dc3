import type { Caller } from '../access/access-rules';

/**
 * Turns the credentials a call carries into a verified caller. Throws
 * UNAUTHENTICATED (no, malformed, forged, expired or mis-addressed
 * credentials) or AUTH_UNAVAILABLE (the keys could not be had: retriable,
 * and not the caller's fault).
 */
export interface CallerAuthenticator {
  /** `authorization`: the call's `authorization` header values, as sent. */
  authenticate(authorization: readonly string[]): Promise<Caller>;
}
