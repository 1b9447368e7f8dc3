import { status } from '@grpc/grpc-js';
import { RpcException } from '@nestjs/microservices';
import { AppError, ErrorCode, toAppError } from '@toolhistory/errors';

const STATUS_BY_CODE: Partial<Record<ErrorCode, status>> = {
  [ErrorCode.InvalidArgument]: status.INVALID_ARGUMENT,
  // At the API, a value the database cannot take came from the request.
  [ErrorCode.UnstorableEvent]: status.INVALID_ARGUMENT,
  [ErrorCode.NotFound]: status.NOT_FOUND,
  [ErrorCode.StorageUnavailable]: status.UNAVAILABLE,
  [ErrorCode.BrokerUnavailable]: status.UNAVAILABLE,
  [ErrorCode.ConcurrencyConflict]: status.ABORTED,
  [ErrorCode.InvalidConfig]: status.FAILED_PRECONDITION,
  [ErrorCode.Unauthenticated]: status.UNAUTHENTICATED,
  [ErrorCode.PermissionDenied]: status.PERMISSION_DENIED,
  [ErrorCode.ResourceExhausted]: status.RESOURCE_EXHAUSTED,
  [ErrorCode.DeadlineExceeded]: status.DEADLINE_EXCEEDED,
  // The key set could not be fetched: our dependency failed, not the caller's token.
  [ErrorCode.AuthUnavailable]: status.UNAVAILABLE,
  // Another instance serves the retry.
  [ErrorCode.ShuttingDown]: status.UNAVAILABLE,
};

/** The edge mapping of the error classification to gRPC status codes. */
export function grpcStatusOf(error: AppError): status {
  return STATUS_BY_CODE[error.code] ?? (error.retriable ? status.UNAVAILABLE : status.INTERNAL);
}

export function toRpcException(thrown: unknown): RpcException {
  const error = toAppError(thrown);
  const code = grpcStatusOf(error);
  // Internal details stay in the logs; callers get the classification.
  const message = code === status.INTERNAL ? 'internal error' : error.message;
  return new RpcException({ code, message });
}
