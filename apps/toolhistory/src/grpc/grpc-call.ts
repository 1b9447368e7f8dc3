import { status } from '@grpc/grpc-js';
import type { Logger } from 'pino';
import { toAppError } from '@toolhistory/errors';
import { loggableIds } from '../loggable-ids';
import { withinBudget } from '../within-budget';
import { grpcStatusOf, toRpcException } from './grpc-status';

/** Statuses that mean the caller asked for something wrong: an info line, no stack. */
const CALLER_MISTAKES = new Set([
  status.INVALID_ARGUMENT,
  status.NOT_FOUND,
  status.UNAUTHENTICATED,
  status.PERMISSION_DENIED,
  status.RESOURCE_EXHAUSTED,
  status.FAILED_PRECONDITION,
]);

export interface CallWithDeadline {
  getDeadline?: () => Date | number;
  getPeer?: () => string;
  /** grpc-js: true once the caller cancelled, its deadline passed, or the call ended. */
  cancelled?: boolean;
  once?: (event: 'cancelled', listener: () => void) => unknown;
}

/** The time a call may take, and the signal of its caller going away (cancel, deadline, disconnect). */
export interface CallBudget {
  ms: number;
  callerGone?: AbortSignal;
}

/**
 * The reason every caller-gone signal aborts with. grpc-js says 'cancelled'
 * after each call's status too, and `abort()` with no reason builds a new
 * DOMException with its stack: 2 % of the gRPC process's CPU in a flood.
 */
const CALLER_GONE = new DOMException('the caller went away', 'AbortError');

/** Leave a little time to send the answer before the caller's deadline passes. */
const SEND_MARGIN_MS = 5;

/**
 * Milliseconds left before the caller's deadline, or `defaultMs` when the
 * caller set none; with the signal that aborts when the caller goes away, so
 * work nobody waits for is dropped (grpc-js says 'cancelled' on a cancel, a
 * passed deadline or a lost connection, and after the status is sent).
 */
export function budgetOf(call: CallWithDeadline | undefined, defaultMs: number): CallBudget {
  const deadline = call?.getDeadline?.();
  const at = deadline instanceof Date ? deadline.getTime() : typeof deadline === 'number' ? deadline : Number.POSITIVE_INFINITY;
  const ms = Number.isFinite(at) ? Math.max(0, at - Date.now() - SEND_MARGIN_MS) : defaultMs;
  if (!call?.once) return { ms };
  const gone = new AbortController();
  if (call.cancelled) gone.abort(CALLER_GONE);
  else call.once('cancelled', () => gone.abort(CALLER_GONE));
  return { ms, callerGone: gone.signal };
}

export function peerOf(call: CallWithDeadline | undefined): string | undefined {
  try {
    return call?.getPeer?.();
  } catch {
    return undefined;
  }
}

/**
 * Runs one unary RPC's work within its budget and answers every failure the
 * same way: the classified status, a caller's mistake logged as one info
 * line, our own faults with their cause.
 */
export async function answerUnary<T>(
  log: Logger,
  rpc: string,
  ids: Record<string, unknown>,
  budget: number | CallBudget,
  work: (signal: AbortSignal) => Promise<T>,
): Promise<T> {
  const { ms, callerGone } = typeof budget === 'number' ? { ms: budget, callerGone: undefined } : budget;
  try {
    return await withinBudget(rpc, ms, work, callerGone);
  } catch (error) {
    // Nobody receives this answer: one debug line, not a warning per call in a storm of cancellations.
    if (callerGone?.aborted) {
      log.debug({ ...loggableIds(ids), reason: toAppError(error).message }, `${rpc} dropped: the caller went away`);
      return Promise.reject(toRpcException(error));
    }
    throw failed(log, rpc, ids, error);
  }
}

/** Logs a failed call by its classification and returns what the caller is answered. */
export function failed(log: Logger, rpc: string, rawIds: Record<string, unknown>, thrown: unknown) {
  const ids = loggableIds(rawIds);
  const error = toAppError(thrown);
  const code = grpcStatusOf(error);
  if (CALLER_MISTAKES.has(code)) log.info({ ...ids, code: error.code, reason: error.message }, `${rpc} refused`);
  else log.warn({ err: thrown, ...ids }, `${rpc} failed`);
  return toRpcException(error);
}
