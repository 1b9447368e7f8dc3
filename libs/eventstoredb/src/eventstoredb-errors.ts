import { ErrorType, isCommandError } from '@kurrent/kurrentdb-client';
import { AppError, ErrorCode, isConnectionError } from '@toolhistory/errors';

/** Failures of the connection rather than of the request: waiting and retrying can succeed. */
const UNAVAILABLE_TYPES: ReadonlySet<ErrorType> = new Set([
  ErrorType.UNAVAILABLE,
  ErrorType.DEADLINE_EXCEEDED,
  ErrorType.TIMEOUT,
  ErrorType.NOT_LEADER,
  ErrorType.CANCELLED,
]);

/** gRPC status UNAVAILABLE and DEADLINE_EXCEEDED, for errors the client did not convert. */
const UNAVAILABLE_GRPC_STATUSES = new Set([14, 4]);
const UNAVAILABLE_MESSAGES = [/failed to discover/i, /connect/i, /unavailable/i, /no connection/i];

/**
 * Classifies anything the EventStoreDB client throws, keeping it as the
 * cause. As with PostgreSQL, only failures caused by the request itself are
 * not retriable (a wrong expected revision, an erased stream, an append
 * larger than the server accepts); anything else, outages and the unknown
 * alike, is retried, so a sick store stalls the recorder instead of losing
 * events to the dead-letter topic.
 */
export function classifyEventStoreDbError(error: unknown): AppError {
  if (error instanceof AppError) return error;
  const message = error instanceof Error ? error.message : String(error);
  if (error instanceof Error && isCommandError(error)) {
    switch (error.type) {
      case ErrorType.WRONG_EXPECTED_VERSION:
        return new AppError(ErrorCode.ConcurrencyConflict, `EventStoreDB: stream ${error.streamName} is not at the expected revision`, {
          cause: error,
          details: { expected: String(error.expectedState), actual: String(error.actualState) },
        });
      case ErrorType.STREAM_DELETED:
        return new AppError(ErrorCode.StreamErased, `EventStoreDB: stream ${error.streamName} was erased`, {
          cause: error,
        });
      case ErrorType.MAXIMUM_APPEND_SIZE_EXCEEDED:
        return new AppError(ErrorCode.UnstorableEvent, `EventStoreDB refused an append larger than ${error.maxAppendSize} bytes`, {
          cause: error,
        });
      default:
        return new AppError(
          UNAVAILABLE_TYPES.has(error.type) ? ErrorCode.StorageUnavailable : ErrorCode.StorageFailed,
          `EventStoreDB: ${message}`,
          {
            cause: error,
            details: { type: error.type },
          },
        );
    }
  }
  const e = error as { code?: unknown };
  const unavailable =
    isConnectionError(error) ||
    (typeof e?.code === 'number' && UNAVAILABLE_GRPC_STATUSES.has(e.code)) ||
    UNAVAILABLE_MESSAGES.some((pattern) => pattern.test(message));
  return new AppError(unavailable ? ErrorCode.StorageUnavailable : ErrorCode.StorageFailed, `EventStoreDB: ${message}`, {
    cause: error,
  });
}

/** A stream that reads as gone: erased (tombstone) or never written (or deleted by someone else). */
export function isStreamGone(error: unknown): boolean {
  return (
    error instanceof Error &&
    isCommandError(error) &&
    (error.type === ErrorType.STREAM_DELETED || error.type === ErrorType.STREAM_NOT_FOUND)
  );
}

/** A hard-deleted stream: the tombstone that no append can pass. */
export function isStreamErased(error: unknown): boolean {
  return error instanceof Error && isCommandError(error) && error.type === ErrorType.STREAM_DELETED;
}
