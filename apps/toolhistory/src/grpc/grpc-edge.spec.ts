import { status } from '@grpc/grpc-js';
import { AppError, ErrorCode } from '@toolhistory/errors';
import { grpcStatusOf, toRpcException } from './grpc-status';
import { isoToTimestamp, timestampToMillis } from './proto-mapping';

describe('gRPC edge mapping', () => {
  it.each([
    [ErrorCode.InvalidArgument, false, status.INVALID_ARGUMENT],
    [ErrorCode.StorageUnavailable, true, status.UNAVAILABLE],
    [ErrorCode.BrokerUnavailable, true, status.UNAVAILABLE],
    [ErrorCode.Internal, true, status.UNAVAILABLE],
    [ErrorCode.Internal, false, status.INTERNAL],
  ])('maps %s (retriable: %s) to status %s', (code, retriable, expected) => {
    expect(grpcStatusOf(new AppError(code, 'x', { retriable }))).toBe(expected);
  });

  it('keeps internal details out of the status message', () => {
    expect(toRpcException(new TypeError('secret stack detail')).getError()).toEqual({ code: status.INTERNAL, message: 'internal error' });
    expect(toRpcException(new AppError(ErrorCode.InvalidArgument, 'tenant_id is required')).getError()).toEqual({
      code: status.INVALID_ARGUMENT,
      message: 'tenant_id is required',
    });
  });

  it('converts timestamps both ways, keeping microseconds going out', () => {
    expect(isoToTimestamp('2026-03-01T12:00:00.123456+00:00')).toEqual({
      seconds: String(Date.parse('2026-03-01T12:00:00Z') / 1000),
      nanos: 123_456_000,
    });
    expect(isoToTimestamp('2026-03-01T12:00:00Z')).toEqual({ seconds: String(Date.parse('2026-03-01T12:00:00Z') / 1000), nanos: 0 });
    expect(timestampToMillis({ seconds: '1772366400', nanos: 250_000_000 })).toBe(1_772_366_400_250);
    expect(timestampToMillis(undefined)).toBeUndefined();
  });
});
