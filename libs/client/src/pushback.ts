import { type Metadata, status as GrpcStatus } from '@grpc/grpc-js';

/** The trailer in which the service says when to try again (gRPC's retry pushback). */
export const RETRY_PUSHBACK_KEY = 'grpc-retry-pushback-ms';

/** A call refused RESOURCE_EXHAUSTED with a pushback is tried this often in all, by default (within its deadline). */
export const DEFAULT_MAX_ATTEMPTS = 3;

/** Retrying a refused call needs at least this much of its deadline left after the wait. */
const MIN_TIME_FOR_AN_ATTEMPT_MS = 10;

/** The pushback in a status's trailers: whole milliseconds, 0 or more; undefined when absent or malformed (then: do not retry). */
export function pushbackOf(trailers: Metadata | undefined): number | undefined {
  const value = trailers?.get(RETRY_PUSHBACK_KEY)[0];
  if (typeof value !== 'string' || !/^\d{1,9}$/.test(value)) return undefined;
  return Number(value);
}

/**
 * The wait before trying a refused call again: never sooner than the
 * service asked, and up to half as long again at random, so callers
 * refused together do not come back together.
 */
export function jitteredPushbackMs(pushbackMs: number, random: () => number = Math.random): number {
  return Math.round(pushbackMs * (1 + random() / 2));
}

/**
 * How long to wait before attempt `attempt + 1` of a call that failed with
 * `code` and `pushbackMs`, or undefined to give up now: only
 * RESOURCE_EXHAUSTED with a pushback is retried (the service said when to
 * come back; nothing else is retried here), at most `maxAttempts` in all,
 * and only when the wait leaves time for an attempt before the deadline (a
 * turn is better served by failing fast than by waiting past it).
 */
export function retryDelayMs(
  failure: { code: GrpcStatus; pushbackMs?: number },
  attempt: number,
  maxAttempts: number,
  msLeft: number,
  random: () => number = Math.random,
): number | undefined {
  if (failure.code !== GrpcStatus.RESOURCE_EXHAUSTED || failure.pushbackMs === undefined || attempt >= maxAttempts) return undefined;
  const wait = jitteredPushbackMs(failure.pushbackMs, random);
  return wait + MIN_TIME_FOR_AN_ATTEMPT_MS <= msLeft ? wait : undefined;
}
