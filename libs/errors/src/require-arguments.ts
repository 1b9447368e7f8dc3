import { AppError, ErrorCode } from './app-error';

/** The longest id a request may carry, as the event contract allows. */
export const MAX_ID_CHARS = 256;

/**
 * Throws INVALID_ARGUMENT naming every id longer than MAX_ID_CHARS, by its
 * wire name: no id the contract refuses can be recorded, so none is looked
 * up, and none of that size reaches a log line.
 */
export function limitIdLengths(fields: Record<string, string | undefined>): void {
  const tooLong = Object.entries(fields)
    .filter(([, value]) => value !== undefined && value.length > MAX_ID_CHARS)
    .map(([name]) => name);
  if (tooLong.length > 0) {
    throw new AppError(ErrorCode.InvalidArgument, `${tooLong.join(' and ')} must be at most ${MAX_ID_CHARS} characters`);
  }
}

/** Throws INVALID_ARGUMENT naming every required field that is empty, by its wire name. */
export function requireArguments(fields: Record<string, string | undefined>): void {
  const missing = Object.entries(fields)
    .filter(([, value]) => !value)
    .map(([name]) => name);
  if (missing.length > 0) {
    throw new AppError(ErrorCode.InvalidArgument, `${missing.join(' and ')} ${missing.length > 1 ? 'are' : 'is'} required`);
  }
}
