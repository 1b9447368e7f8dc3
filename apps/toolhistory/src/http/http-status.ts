import { HttpException, HttpStatus } from '@nestjs/common';
import { AppError, ErrorCode, toAppError } from '@toolhistory/errors';

/** Every code's HTTP status: the edge's mapping of the classification (the gRPC edge has its own, grpc-status.ts), complete by type. */
export const HTTP_STATUS_BY_CODE: Readonly<Record<ErrorCode, HttpStatus>> = {
  // Kafka messages' faults, met by the recorder: no route raises them, and one that did would be our fault.
  INVALID_EVENT: HttpStatus.INTERNAL_SERVER_ERROR,
  NOT_JSON: HttpStatus.INTERNAL_SERVER_ERROR,
  OVERSIZE: HttpStatus.INTERNAL_SERVER_ERROR,
  UNKNOWN_EVENT_TYPE: HttpStatus.INTERNAL_SERVER_ERROR,
  UNSUPPORTED_SCHEMA_VERSION: HttpStatus.INTERNAL_SERVER_ERROR,
  BROKER_REJECTED: HttpStatus.INTERNAL_SERVER_ERROR,
  STREAM_ERASED: HttpStatus.INTERNAL_SERVER_ERROR,
  UNSTORABLE_EVENT: HttpStatus.INTERNAL_SERVER_ERROR,
  CONCURRENCY_CONFLICT: HttpStatus.INTERNAL_SERVER_ERROR,
  ALREADY_EXISTS: HttpStatus.CONFLICT,
  NOT_SUPPORTED: HttpStatus.NOT_IMPLEMENTED,
  INVALID_CONFIG: HttpStatus.INTERNAL_SERVER_ERROR,
  INTERNAL: HttpStatus.INTERNAL_SERVER_ERROR,
  INVALID_ARGUMENT: HttpStatus.BAD_REQUEST,
  NOT_FOUND: HttpStatus.NOT_FOUND,
  UNAUTHENTICATED: HttpStatus.UNAUTHORIZED,
  PERMISSION_DENIED: HttpStatus.FORBIDDEN,
  RESOURCE_EXHAUSTED: HttpStatus.TOO_MANY_REQUESTS,
  DEADLINE_EXCEEDED: HttpStatus.GATEWAY_TIMEOUT,
  STORAGE_UNAVAILABLE: HttpStatus.SERVICE_UNAVAILABLE,
  NOT_YET_RECORDED: HttpStatus.SERVICE_UNAVAILABLE,
  STORAGE_FAILED: HttpStatus.SERVICE_UNAVAILABLE,
  CONTENTION: HttpStatus.SERVICE_UNAVAILABLE,
  BROKER_UNAVAILABLE: HttpStatus.SERVICE_UNAVAILABLE,
  AUTH_UNAVAILABLE: HttpStatus.SERVICE_UNAVAILABLE,
  KEY_UNAVAILABLE: HttpStatus.SERVICE_UNAVAILABLE,
  SHUTTING_DOWN: HttpStatus.SERVICE_UNAVAILABLE,
};

export function httpStatusOf(error: AppError): HttpStatus {
  return HTTP_STATUS_BY_CODE[error.code];
}

export function toHttpException(thrown: unknown): HttpException {
  const error = toAppError(thrown);
  const statusCode = httpStatusOf(error);
  // Internal details stay in the logs; callers get the classification.
  const message = statusCode === HttpStatus.INTERNAL_SERVER_ERROR ? 'internal error' : error.message;
  return new HttpException({ statusCode, code: error.code, message }, statusCode);
}
