import { status } from '@grpc/grpc-js';
import { AppError, ErrorCode, isRetriable } from '@toolhistory/errors';
import { grpcStatusOf, toRpcException } from './grpc-status';
import { formatOf, invocationStatusOf, isoToTimestamp, staleResultsOf, timestampToMillis, usageBucketOf } from './proto-mapping';

describe('gRPC edge mapping', () => {
  it.each([
    [ErrorCode.InvalidArgument, false, status.INVALID_ARGUMENT],
    [ErrorCode.StorageUnavailable, true, status.UNAVAILABLE],
    [ErrorCode.BrokerUnavailable, true, status.UNAVAILABLE],
    // A store's failure not understood (was INTERNAL marked retriable): retried, and UNAVAILABLE to callers.
    [ErrorCode.StorageFailed, true, status.UNAVAILABLE],
    [ErrorCode.Internal, false, status.INTERNAL],
  ])('maps %s (retriable: %s) to status %s', (code, retriable, expected) => {
    const error = new AppError(code, 'x');
    expect(error.retriable).toBe(retriable);
    expect(grpcStatusOf(error)).toBe(expected);
  });

  it('answers every retriable code with a status a client retries, and no code with OK', () => {
    const retryable = new Set([status.UNAVAILABLE, status.RESOURCE_EXHAUSTED, status.DEADLINE_EXCEEDED, status.ABORTED]);
    for (const code of Object.values(ErrorCode)) {
      const answered = grpcStatusOf(new AppError(code, 'x'));
      expect(answered).not.toBe(status.OK);
      if (isRetriable(code)) expect([code, retryable.has(answered)]).toEqual([code, true]);
    }
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

  it('refuses an enum value this build does not know, naming the field, instead of quietly using the default', () => {
    expect(formatOf(undefined)).toBe('openai_chat');
    expect(formatOf('HISTORY_FORMAT_UNSPECIFIED')).toBe('openai_chat');
    expect(formatOf('HISTORY_FORMAT_ANTHROPIC_MESSAGES')).toBe('anthropic_messages');
    expect(() => formatOf(99)).toThrow(
      expect.objectContaining({ code: ErrorCode.InvalidArgument, message: expect.stringMatching(/^format: 99 is not one of/) }),
    );
    expect(() => invocationStatusOf(42)).toThrow(expect.objectContaining({ message: expect.stringMatching(/^status: 42 is not one of/) }));
    expect(invocationStatusOf('INVOCATION_STATUS_ERROR')).toBe('error');
    expect(invocationStatusOf(0)).toBeUndefined();
    expect(() => usageBucketOf(7)).toThrow(expect.objectContaining({ message: expect.stringMatching(/^bucket: 7/) }));
    expect(() => staleResultsOf(3)).toThrow(expect.objectContaining({ message: expect.stringMatching(/^stale_results: 3/) }));
  });

  it('refuses a timestamp outside google.protobuf.Timestamp, naming the field', () => {
    expect(() => timestampToMillis({ seconds: '9999999999999' }, 'as_of')).toThrow(
      expect.objectContaining({ code: ErrorCode.InvalidArgument, message: expect.stringMatching(/^as_of\.seconds must be between/) }),
    );
    expect(() => timestampToMillis({ seconds: '0', nanos: -1 }, 'from')).toThrow(
      expect.objectContaining({ message: 'from.nanos must be between 0 and 999999999' }),
    );
  });
});
