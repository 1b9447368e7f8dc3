import { status as GrpcStatus, type ServiceError } from '@grpc/grpc-js';
import { pushbackOf } from './pushback';
import { isRetriable } from './retriable-failures';

/**
 * Anything the package throws of its own: `retriable` says whether the
 * same call may pass when tried again (see retriable-failures.ts).
 */
export class ToolHistoryClientError extends Error {
  override readonly name: string = 'ToolHistoryClientError';

  constructor(
    message: string,
    readonly retriable: boolean,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** An event the contract refuses, caught in the worker before it is sent (it would be dead-lettered). Never retriable. */
export class InvalidToolEventError extends ToolHistoryClientError {
  override readonly name = 'InvalidToolEventError';
  constructor(readonly problems: readonly string[]) {
    super(`invalid tool event: ${problems.join('; ')}`, false);
  }
}

/**
 * A publisher's persist hook threw: nothing of the batch was sent. Names the
 * tool and the payload (`arguments` or `result`); the hook's error is the `cause`.
 */
export class PersistHookError extends ToolHistoryClientError {
  override readonly name = 'PersistHookError';
  constructor(
    readonly toolName: string,
    readonly kind: 'arguments' | 'result',
    cause: unknown,
  ) {
    // The hook's own message may quote the payload it was hiding: it stays in `cause`, out of this message.
    super(`persist hook of ${toolName} failed on its ${kind}; nothing was published`, false, { cause });
  }
}

/**
 * The broker did not acknowledge an event (after the publisher's own
 * retries): `code` names the failure (Kafka's error code, or kafkajs's
 * error class), `retriable` whether publishing the same step again may
 * pass. A retried step keeps its derived event id, so one that did reach
 * the broker is recorded once. The broker client's error is the `cause`.
 */
export class PublishError extends ToolHistoryClientError {
  override readonly name = 'PublishError';
  constructor(
    readonly code: string,
    reason: string,
    options?: { cause?: unknown },
  ) {
    super(`publishing failed${isRetriable(code) ? ' (retriable)' : ''}: ${reason}`, isRetriable(code), options);
  }

  /** The PublishError of what kafkajs threw (its last try's error when it gave up retrying). */
  static fromKafkaError(error: unknown): PublishError {
    const last = kafkaCauseOf(error);
    const { type, name, message } = (last ?? {}) as { type?: unknown; name?: unknown; message?: unknown };
    const code = typeof type === 'string' && type !== '' ? type : typeof name === 'string' && name !== '' ? name : 'UNKNOWN';
    const reason = typeof message === 'string' && message !== '' ? `${message} (${code})` : code;
    return new PublishError(code, reason, { cause: error });
  }
}

/** What failed last: kafkajs's KafkaJSNumberOfRetriesExceeded carries the error of its last try. */
function kafkaCauseOf(error: unknown): unknown {
  let current = error;
  while (typeof current === 'object' && current !== null && (current as { name?: unknown }).name === 'KafkaJSNumberOfRetriesExceeded') {
    const { cause } = current as { cause?: unknown };
    if (cause === undefined || cause === current) break;
    current = cause;
  }
  return current;
}

/** The gRPC status names, by code. */
export type ToolHistoryStatus = keyof typeof GrpcStatus;

/**
 * A failed ToolHistory call: the gRPC status (code and name), the service's
 * message, whether a retry may pass, and, when the service refused it as
 * busy, when to come back (`retryAfterMs`, its `grpc-retry-pushback-ms`).
 */
export class ToolHistoryError extends ToolHistoryClientError {
  override readonly name = 'ToolHistoryError';
  readonly status: ToolHistoryStatus;
  readonly retryAfterMs?: number;

  constructor(
    readonly code: GrpcStatus,
    readonly details: string,
    readonly method: string,
    options?: { cause?: unknown; retryAfterMs?: number },
  ) {
    const name = (GrpcStatus[code] ?? 'UNKNOWN') as ToolHistoryStatus;
    super(`${method}: ${name}: ${details}`, isRetriable(name), options);
    this.status = name;
    if (options?.retryAfterMs !== undefined) this.retryAfterMs = options.retryAfterMs;
  }

  static fromServiceError(method: string, error: ServiceError): ToolHistoryError {
    return new ToolHistoryError(error.code ?? GrpcStatus.UNKNOWN, error.details || error.message, method, {
      cause: error,
      retryAfterMs: pushbackOf(error.metadata),
    });
  }
}
