import {
  AccessDeniedError,
  DeadlineExceededError,
  MaxAppendSizeExceededError,
  StreamDeletedError,
  StreamNotFoundError,
  UnavailableError,
  UnknownError,
  WrongExpectedVersionError,
} from '@kurrent/kurrentdb-client';
import { AppError, ErrorCode } from '@toolhistory/errors';
import { classifyEventStoreDbError, isStreamErased, isStreamGone } from './eventstoredb-errors';

describe('classifyEventStoreDbError', () => {
  it('reports a wrong expected revision as a conflict that retrying cannot fix', () => {
    const cause = new WrongExpectedVersionError(undefined, { streamName: 'toolhistory/t/c', expected: 1n, current: 2n });
    const error = classifyEventStoreDbError(cause);
    expect(error).toMatchObject({ code: ErrorCode.ConcurrencyConflict, retriable: false, details: { expected: '1', actual: '2' } });
    expect(error.cause).toBe(cause);
  });

  it('reports a tombstoned stream as erased', () => {
    const cause = StreamDeletedError.fromStreamName('toolhistory/t/c');
    expect(classifyEventStoreDbError(cause)).toMatchObject({ code: ErrorCode.StreamErased, retriable: false, cause });
  });

  it('reports an append larger than the server takes as unstorable', () => {
    expect(classifyEventStoreDbError(MaxAppendSizeExceededError.fromMaxAppendSize(1_048_576))).toMatchObject({
      code: ErrorCode.UnstorableEvent,
      retriable: false,
    });
  });

  it('reports outages as a retriable unavailable store, keeping the cause', () => {
    for (const cause of [
      new UnavailableError(),
      new DeadlineExceededError(),
      Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:2113'), { code: 'ECONNREFUSED' }),
    ]) {
      expect(classifyEventStoreDbError(cause)).toMatchObject({ code: ErrorCode.StorageUnavailable, retriable: true, cause });
    }
    expect(classifyEventStoreDbError(new Error('Failed to discover after 10 attempts.'))).toMatchObject({
      code: ErrorCode.StorageUnavailable,
    });
    expect(classifyEventStoreDbError(Object.assign(new Error('14 UNAVAILABLE: No connection established'), { code: 14 }))).toMatchObject({
      code: ErrorCode.StorageUnavailable,
    });
  });

  it('retries anything else, so a sick store stalls instead of dead-lettering events', () => {
    for (const cause of [new AccessDeniedError(), new UnknownError(), new TypeError('boom')]) {
      // STORAGE_FAILED: the store's failure, not understood here (INTERNAL is this service's own fault, never retried).
      expect(classifyEventStoreDbError(cause)).toMatchObject({ code: ErrorCode.StorageFailed, retriable: true, cause });
    }
  });

  it('keeps an existing classification', () => {
    const error = new AppError(ErrorCode.InvalidArgument, 'bad');
    expect(classifyEventStoreDbError(error)).toBe(error);
  });

  it('tells gone and erased streams apart', () => {
    const deleted = StreamDeletedError.fromStreamName('s');
    const missing = new StreamNotFoundError(undefined, 's');
    expect([isStreamGone(deleted), isStreamErased(deleted)]).toEqual([true, true]);
    expect([isStreamGone(missing), isStreamErased(missing)]).toEqual([true, false]);
    expect([isStreamGone(new UnavailableError()), isStreamErased(new Error('x'))]).toEqual([false, false]);
  });
});
