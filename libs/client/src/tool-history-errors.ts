import { status as GrpcStatus, type ServiceError } from '@grpc/grpc-js';
import { pushbackOf } from './pushback';

/** An event the contract refuses, caught in the worker before it is sent (it would be dead-lettered). */
export class InvalidToolEventError extends Error {
  override readonly name = 'InvalidToolEventError';
  constructor(readonly problems: readonly string[]) {
    super(`invalid tool event: ${problems.join('; ')}`);
  }
}

/**
 * A publisher's persist hook threw: nothing of the batch was sent. Names the
 * tool and the payload (`arguments` or `result`); the hook's error is the `cause`.
 */
export class PersistHookError extends Error {
  override readonly name = 'PersistHookError';
  constructor(
    readonly toolName: string,
    readonly kind: 'arguments' | 'result',
    cause: unknown,
  ) {
    // The hook's own message may quote the payload it was hiding: it stays in `cause`, out of this message.
    super(`persist hook of ${toolName} failed on its ${kind}; nothing was published`, { cause });
  }
}

/** The gRPC status names, by code. */
export type ToolHistoryStatus = keyof typeof GrpcStatus;

/** Worth trying again with the same request: the service or the network was briefly unable, not the request wrong. */
const RETRIABLE: ReadonlySet<GrpcStatus> = new Set([
  GrpcStatus.UNAVAILABLE,
  GrpcStatus.DEADLINE_EXCEEDED,
  GrpcStatus.RESOURCE_EXHAUSTED,
  GrpcStatus.ABORTED,
]);

/**
 * A failed ToolHistory call: the gRPC status (code and name), the service's
 * message, whether a retry may pass, and, when the service refused it as
 * busy, when to come back (`retryAfterMs`, its `grpc-retry-pushback-ms`).
 */
export class ToolHistoryError extends Error {
  override readonly name = 'ToolHistoryError';
  readonly status: ToolHistoryStatus;
  readonly retriable: boolean;
  readonly retryAfterMs?: number;

  constructor(
    readonly code: GrpcStatus,
    readonly details: string,
    readonly method: string,
    options?: { cause?: unknown; retryAfterMs?: number },
  ) {
    const name = (GrpcStatus[code] ?? 'UNKNOWN') as ToolHistoryStatus;
    super(`${method}: ${name}: ${details}`, options);
    this.status = name;
    this.retriable = RETRIABLE.has(code);
    if (options?.retryAfterMs !== undefined) this.retryAfterMs = options.retryAfterMs;
  }

  static fromServiceError(method: string, error: ServiceError): ToolHistoryError {
    return new ToolHistoryError(error.code ?? GrpcStatus.UNKNOWN, error.details || error.message, method, {
      cause: error,
      retryAfterMs: pushbackOf(error.metadata),
    });
  }
}
