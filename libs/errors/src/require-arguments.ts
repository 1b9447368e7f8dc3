import { AppError } from './app-error';
import { ErrorCode } from './error-codes';

/** The longest id a request may carry, as the event contract allows. */
export const MAX_ID_CHARS = 256;

/** Why a request's id cannot be one that was ever recorded, or null when it can. */
export function idProblem(name: string, value: string | undefined): string | null {
  if (value === undefined) return null;
  if (value.length > MAX_ID_CHARS) return `${name} must be at most ${MAX_ID_CHARS} characters`;
  // PostgreSQL text cannot hold NUL, so no recorded id has one.
  if (value.includes('\u0000')) return `${name} must not contain NUL characters`;
  return null;
}

/**
 * Throws INVALID_ARGUMENT naming every id that cannot have been recorded
 * (too long, or holding NUL), by its wire name: none is looked up, and none
 * of that size reaches a log line.
 */
export function checkRequestIds(fields: Record<string, string | undefined>): void {
  const problems = Object.entries(fields)
    .map(([name, value]) => idProblem(name, value))
    .filter((p): p is string => p !== null);
  if (problems.length > 0) throw new AppError(ErrorCode.InvalidArgument, problems.join('; '));
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
