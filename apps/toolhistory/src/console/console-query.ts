import { AppError, ErrorCode } from '@toolhistory/errors';

/**
 * Reads the console API's query parameters, collecting every problem so
 * one answer names them all (as config validation does at boot).
 */
export class ConsoleQuery {
  private readonly problems: string[] = [];

  constructor(private readonly query: Record<string, unknown>) {}

  text(name: string): string | undefined {
    const value = this.query[name];
    if (value === undefined || value === '') return undefined;
    if (typeof value !== 'string') {
      this.problems.push(`${name} must be given once, as text`);
      return undefined;
    }
    return value;
  }

  /** An ISO-8601 time, as milliseconds since the epoch. */
  time(name: string): number | undefined {
    return this.checked(
      name,
      Date.parse,
      (ms) => !Number.isNaN(ms),
      (value) => `${name} "${value.slice(0, 64)}" is not a time: write an ISO-8601 time`,
    );
  }

  wholeNumber(name: string): number | undefined {
    return this.checked(
      name,
      (value) => (/^\d{1,9}$/.test(value) ? Number(value) : NaN),
      (n) => !Number.isNaN(n),
      (value) => `${name} must be a whole number, not "${value.slice(0, 64)}"`,
    );
  }

  oneOf<T extends string>(name: string, allowed: readonly T[]): T | undefined {
    return this.checked(
      name,
      (value) => value as T,
      (value) => allowed.includes(value),
      () => `${name} must be one of ${allowed.join(', ')}`,
    );
  }

  /** The parameter read by `parse` when `valid` says so; otherwise its problem is kept for check(). */
  private checked<T>(
    name: string,
    parse: (value: string) => T,
    valid: (parsed: T) => boolean,
    problem: (value: string) => string,
  ): T | undefined {
    const value = this.text(name);
    if (value === undefined) return undefined;
    const parsed = parse(value);
    if (valid(parsed)) return parsed;
    this.problems.push(problem(value));
    return undefined;
  }

  /** Throws INVALID_ARGUMENT naming every problem found so far. */
  check(): void {
    if (this.problems.length > 0) throw new AppError(ErrorCode.InvalidArgument, this.problems.join('; '));
  }
}
