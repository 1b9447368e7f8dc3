/**
 * Every failure that crosses a boundary carries a classification: a stable
 * code, whether retrying the same work can succeed, and the original cause.
 * Edges map it: the recorder retries or dead-letters, gRPC picks a status.
 */
export const ErrorCode = {
  InvalidEvent: 'INVALID_EVENT',
  NotJson: 'NOT_JSON',
  Oversize: 'OVERSIZE',
  UnknownEventType: 'UNKNOWN_EVENT_TYPE',
  UnsupportedSchemaVersion: 'UNSUPPORTED_SCHEMA_VERSION',
  UnstorableEvent: 'UNSTORABLE_EVENT',
  InvalidArgument: 'INVALID_ARGUMENT',
  InvalidConfig: 'INVALID_CONFIG',
  StorageUnavailable: 'STORAGE_UNAVAILABLE',
  BrokerUnavailable: 'BROKER_UNAVAILABLE',
  BrokerRejected: 'BROKER_REJECTED',
  ConcurrencyConflict: 'CONCURRENCY_CONFLICT',
  OffsetGap: 'OFFSET_GAP',
  StreamErased: 'STREAM_ERASED',
  NotFound: 'NOT_FOUND',
  Unauthenticated: 'UNAUTHENTICATED',
  PermissionDenied: 'PERMISSION_DENIED',
  ResourceExhausted: 'RESOURCE_EXHAUSTED',
  DeadlineExceeded: 'DEADLINE_EXCEEDED',
  AuthUnavailable: 'AUTH_UNAVAILABLE',
  ShuttingDown: 'SHUTTING_DOWN',
  Internal: 'INTERNAL',
} as const;

export type ErrorCode = (typeof ErrorCode)[keyof typeof ErrorCode];

export interface AppErrorOptions {
  retriable?: boolean;
  cause?: unknown;
  details?: Readonly<Record<string, unknown>>;
}

export class AppError extends Error {
  readonly code: ErrorCode;
  readonly retriable: boolean;
  readonly details: Readonly<Record<string, unknown>>;

  constructor(code: ErrorCode, message: string, options: AppErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'AppError';
    this.code = code;
    this.retriable = options.retriable ?? false;
    this.details = options.details ?? {};
  }

  static is(value: unknown): value is AppError {
    return value instanceof AppError;
  }
}

/** An input the service will never accept, however often it is retried. */
export function rejected(code: ErrorCode, message: string, details?: Record<string, unknown>): AppError {
  return new AppError(code, message, { retriable: false, details });
}

/** Wraps anything thrown into an AppError, keeping an existing classification. */
export function toAppError(error: unknown, fallback: ErrorCode = ErrorCode.Internal): AppError {
  if (error instanceof AppError) return error;
  const message = error instanceof Error ? error.message : String(error);
  return new AppError(fallback, message, { retriable: false, cause: error });
}
