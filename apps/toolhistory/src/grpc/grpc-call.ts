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
}

/** Leave a little time to send the answer before the caller's deadline passes. */
const SEND_MARGIN_MS = 5;

/** Milliseconds left before the caller's deadline, or `defaultMs` when the caller set none. */
export function budgetOf(call: CallWithDeadline | undefined, defaultMs: number): number {
  const deadline = call?.getDeadline?.();
  const at = deadline instanceof Date ? deadline.getTime() : typeof deadline === 'number' ? deadline : Number.POSITIVE_INFINITY;
  if (!Number.isFinite(at)) return defaultMs;
  return Math.max(0, at - Date.now() - SEND_MARGIN_MS);
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
  budgetMs: number,
  work: (signal: AbortSignal) => Promise<T>,
): Promise<T> {
  try {
    return await withinBudget(rpc, budgetMs, work);
  } catch (error) {
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
