import { Metadata, status } from '@grpc/grpc-js';
import { RpcException } from '@nestjs/microservices';
import { AppError, ErrorCode, toAppError } from '@toolhistory/errors';

/** Every code's gRPC status: the edge's mapping of the classification (libs/errors/src/error-codes.ts), complete by type. */
export const GRPC_STATUS_BY_CODE: Readonly<Record<ErrorCode, status>> = {
  // Kafka messages' faults, met by the recorder: no RPC raises them, and one that did would be our fault.
  INVALID_EVENT: status.INTERNAL,
  NOT_JSON: status.INTERNAL,
  OVERSIZE: status.INTERNAL,
  UNKNOWN_EVENT_TYPE: status.INTERNAL,
  UNSUPPORTED_SCHEMA_VERSION: status.INTERNAL,
  BROKER_REJECTED: status.INTERNAL,
  STREAM_ERASED: status.INTERNAL,
  // At the API, a value the database cannot take came from the request.
  UNSTORABLE_EVENT: status.INVALID_ARGUMENT,
  INVALID_ARGUMENT: status.INVALID_ARGUMENT,
  INVALID_CONFIG: status.FAILED_PRECONDITION,
  NOT_FOUND: status.NOT_FOUND,
  UNAUTHENTICATED: status.UNAUTHENTICATED,
  PERMISSION_DENIED: status.PERMISSION_DENIED,
  CONCURRENCY_CONFLICT: status.ABORTED,
  ALREADY_EXISTS: status.ALREADY_EXISTS,
  NOT_SUPPORTED: status.FAILED_PRECONDITION,
  INTERNAL: status.INTERNAL,
  STORAGE_UNAVAILABLE: status.UNAVAILABLE,
  STORAGE_FAILED: status.UNAVAILABLE,
  CONTENTION: status.ABORTED,
  BROKER_UNAVAILABLE: status.UNAVAILABLE,
  RESOURCE_EXHAUSTED: status.RESOURCE_EXHAUSTED,
  // The recorder has not reached the caller's events yet: a retry (or a longer deadline) is answered.
  NOT_YET_RECORDED: status.UNAVAILABLE,
  DEADLINE_EXCEEDED: status.DEADLINE_EXCEEDED,
  // The key set could not be fetched: our dependency failed, not the caller's token.
  AUTH_UNAVAILABLE: status.UNAVAILABLE,
  // Another instance serves the retry.
  SHUTTING_DOWN: status.UNAVAILABLE,
};

/** The edge mapping of the error classification to gRPC status codes. */
export function grpcStatusOf(error: AppError): status {
  return GRPC_STATUS_BY_CODE[error.code];
}

/** The gRPC trailer that tells a client when to try again (gRPC A6; honoured by grpc-js and grpc-core retries, and our clients). */
export const RETRY_PUSHBACK_KEY = 'grpc-retry-pushback-ms';

/** Trailers with a pushback of `ms` whole milliseconds. */
export function pushbackMetadata(ms: number): Metadata {
  const metadata = new Metadata();
  metadata.set(RETRY_PUSHBACK_KEY, String(Math.max(0, Math.round(ms))));
  return metadata;
}

/**
 * The status a failure is answered with. A RESOURCE_EXHAUSTED that says
 * when to come back (`details.retryAfterMs`) carries it as the pushback
 * trailer.
 */
export function toRpcException(thrown: unknown): RpcException {
  const error = toAppError(thrown);
  const code = grpcStatusOf(error);
  // Internal details stay in the logs; callers get the classification.
  const message = code === status.INTERNAL ? 'internal error' : error.message;
  const retryAfterMs = error.details.retryAfterMs;
  if (code === status.RESOURCE_EXHAUSTED && typeof retryAfterMs === 'number')
    return new RpcException({ code, message, metadata: pushbackMetadata(retryAfterMs) });
  return new RpcException({ code, message });
}
