import { HttpException, HttpStatus } from '@nestjs/common';
import { AppError, ErrorCode, toAppError } from '@toolhistory/errors';

const STATUS_BY_CODE: Partial<Record<ErrorCode, HttpStatus>> = {
  [ErrorCode.InvalidArgument]: HttpStatus.BAD_REQUEST,
  [ErrorCode.NotFound]: HttpStatus.NOT_FOUND,
  [ErrorCode.Unauthenticated]: HttpStatus.UNAUTHORIZED,
  [ErrorCode.PermissionDenied]: HttpStatus.FORBIDDEN,
  [ErrorCode.ResourceExhausted]: HttpStatus.TOO_MANY_REQUESTS,
  [ErrorCode.DeadlineExceeded]: HttpStatus.GATEWAY_TIMEOUT,
  [ErrorCode.StorageUnavailable]: HttpStatus.SERVICE_UNAVAILABLE,
  [ErrorCode.BrokerUnavailable]: HttpStatus.SERVICE_UNAVAILABLE,
  [ErrorCode.AuthUnavailable]: HttpStatus.SERVICE_UNAVAILABLE,
  [ErrorCode.ShuttingDown]: HttpStatus.SERVICE_UNAVAILABLE,
};

/** The edge mapping of the error classification to HTTP statuses (the gRPC edge has its own, grpc-status.ts). */
export function httpStatusOf(error: AppError): HttpStatus {
  return STATUS_BY_CODE[error.code] ?? (error.retriable ? HttpStatus.SERVICE_UNAVAILABLE : HttpStatus.INTERNAL_SERVER_ERROR);
}

export function toHttpException(thrown: unknown): HttpException {
  const error = toAppError(thrown);
  const statusCode = httpStatusOf(error);
  // Internal details stay in the logs; callers get the classification.
  const message = statusCode === HttpStatus.INTERNAL_SERVER_ERROR ? 'internal error' : error.message;
  return new HttpException({ statusCode, code: error.code, message }, statusCode);
}
