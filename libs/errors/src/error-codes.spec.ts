import { AppError, toAppError } from './app-error';
import { CONNECTION_ERROR_CODES, isConnectionError } from './connection-errors';
import { ERROR_CODES, ErrorCode, isRetriable } from './error-codes';

describe('the error classification: one table, by code', () => {
  it.each([
    ['INVALID_EVENT', false],
    ['NOT_JSON', false],
    ['OVERSIZE', false],
    ['UNKNOWN_EVENT_TYPE', false],
    ['UNSUPPORTED_SCHEMA_VERSION', false],
    ['UNSTORABLE_EVENT', false],
    ['INVALID_ARGUMENT', false],
    ['INVALID_CONFIG', false],
    ['NOT_FOUND', false],
    ['UNAUTHENTICATED', false],
    ['PERMISSION_DENIED', false],
    ['CONCURRENCY_CONFLICT', false],
    ['STREAM_ERASED', false],
    ['INTERNAL', false],
    ['BROKER_REJECTED', false],
    ['STORAGE_UNAVAILABLE', true],
    ['STORAGE_FAILED', true],
    ['CONTENTION', true],
    ['BROKER_UNAVAILABLE', true],
    ['RESOURCE_EXHAUSTED', true],
    ['DEADLINE_EXCEEDED', true],
    ['AUTH_UNAVAILABLE', true],
    ['KEY_UNAVAILABLE', true],
    ['SHUTTING_DOWN', true],
  ] as const)('%s is retriable: %s', (code, retriable) => {
    expect(isRetriable(code)).toBe(retriable);
    expect(new AppError(code, 'x').retriable).toBe(retriable);
  });

  it('names every code once, and each name maps to a code of the table', () => {
    expect(Object.values(ErrorCode).sort()).toEqual(Object.keys(ERROR_CODES).sort());
    for (const { meaning } of Object.values(ERROR_CODES)) expect(meaning.length).toBeGreaterThan(10);
  });

  it('keeps an existing classification, and takes anything else for our own fault', () => {
    const outage = new AppError(ErrorCode.StorageUnavailable, 'down');
    expect(toAppError(outage)).toBe(outage);
    expect(toAppError(new TypeError('boom'))).toMatchObject({ code: 'INTERNAL', retriable: false, message: 'boom' });
    expect(toAppError('text', ErrorCode.StorageFailed)).toMatchObject({ code: 'STORAGE_FAILED', retriable: true, message: 'text' });
  });

  it.each([
    [{ code: 'ECONNREFUSED' }, true],
    [{ code: 'ECONNRESET' }, true],
    [{ code: 'EAI_AGAIN' }, true],
    [{ code: 'ENOENT' }, false],
    [{ code: '57P01' }, false],
    [{ code: 14 }, false],
    [null, false],
    ['ECONNREFUSED', false],
  ])('isConnectionError(%p) is %s', (error, expected) => {
    expect(isConnectionError(error)).toBe(expected);
  });

  it('lists the connection codes once', () => {
    expect([...CONNECTION_ERROR_CODES]).toEqual([
      'ECONNREFUSED',
      'ECONNRESET',
      'ETIMEDOUT',
      'EPIPE',
      'ENOTFOUND',
      'EAI_AGAIN',
      'EHOSTUNREACH',
    ]);
  });
});
