import { AppError, ErrorCode } from './app-error';

/** Throws INVALID_ARGUMENT naming every required field that is empty, by its wire name. */
export function requireArguments(fields: Record<string, string | undefined>): void {
  const missing = Object.entries(fields)
    .filter(([, value]) => !value)
    .map(([name]) => name);
  if (missing.length > 0) {
    throw new AppError(ErrorCode.InvalidArgument, `${missing.join(' and ')} ${missing.length > 1 ? 'are' : 'is'} required`);
  }
}
