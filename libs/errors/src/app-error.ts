import { type ErrorCode, isRetriable } from './error-codes';

export interface AppErrorOptions {
  cause?: unknown;
  details?: Readonly<Record<string, unknown>>;
}

/**
 * A classified failure: a stable code (which says whether it is retriable,
 * error-codes.ts), a message for people, and the original cause.
 */
export class AppError extends Error {
  readonly code: ErrorCode;
  readonly details: Readonly<Record<string, unknown>>;

  constructor(code: ErrorCode, message: string, options: AppErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'AppError';
    this.code = code;
    this.details = options.details ?? {};
  }

  /** Whether retrying the same work can succeed: decided by the code, never where the error is thrown. */
  get retriable(): boolean {
    return isRetriable(this.code);
  }

  static is(value: unknown): value is AppError {
    return value instanceof AppError;
  }
}

/** An input the service will never accept, however often it is retried. */
export function rejected(code: ErrorCode, message: string, details?: Record<string, unknown>): AppError {
  return new AppError(code, message, { details });
}

/** Wraps anything thrown into an AppError, keeping an existing classification; anything else is our own fault. */
export function toAppError(error: unknown, fallback: ErrorCode = 'INTERNAL'): AppError {
  if (error instanceof AppError) return error;
  const message = error instanceof Error ? error.message : String(error);
  return new AppError(fallback, message, { cause: error });
}
