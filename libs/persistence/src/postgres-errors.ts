import { AppError, ErrorCode, isConnectionError } from '@toolhistory/errors';

const RETRIABLE_MESSAGES = [
  /Connection terminated/i,
  /timeout exceeded when trying to connect/i,
  /Client has encountered a connection error/i,
  /connection .*closed/i,
];

/**
 * SQLSTATE classes whose failure is caused by the data itself (bad text,
 * too large a value): retrying cannot help, so the offending event is set
 * aside. Any other SQLSTATE (outages, lock timeouts, a schema gone missing)
 * is the database's and is retried, so a sick database stalls the
 * partition instead of losing events. An error with no SQLSTATE that is no
 * connection failure was thrown by our own code inside the transaction:
 * not retriable, so the recorder narrows it down to the event that causes
 * it (and retries if recording without that event fails too).
 */
function isDataError(sqlState: string): boolean {
  // 23505 (unique violation) is a race with a concurrent writer of the same event: retry.
  return sqlState.startsWith('22') || (sqlState.startsWith('23') && sqlState !== '23505') || sqlState.startsWith('54');
}

export function classifyPostgresError(error: unknown): AppError {
  if (error instanceof AppError) return error;
  const e = error as { code?: unknown; message?: unknown };
  const code = typeof e?.code === 'string' ? e.code : '';
  const message = typeof e?.message === 'string' ? e.message : String(error);
  if (/^[0-9A-Z]{5}$/.test(code) && isDataError(code)) {
    return new AppError(ErrorCode.UnstorableEvent, `PostgreSQL rejected the data (${code}): ${message}`, {
      cause: error,
      details: { sqlState: code },
    });
  }
  const unavailable = isConnectionError(error) || RETRIABLE_MESSAGES.some((r) => r.test(message)) || /^(08|53|57|40|55)/.test(code);
  const fromTheDatabase = /^[0-9A-Z]{5}$/.test(code);
  if (!unavailable && !fromTheDatabase) {
    return new AppError(ErrorCode.Internal, message, { cause: error });
  }
  return new AppError(unavailable ? ErrorCode.StorageUnavailable : ErrorCode.StorageFailed, `PostgreSQL: ${message}`, {
    cause: error,
    details: code ? { code } : {},
  });
}
