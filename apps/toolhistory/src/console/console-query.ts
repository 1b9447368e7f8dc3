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
    const value = this.text(name);
    if (value === undefined) return undefined;
    const ms = Date.parse(value);
    if (Number.isNaN(ms)) this.problems.push(`${name} "${value.slice(0, 64)}" is not a time: write an ISO-8601 time`);
    return Number.isNaN(ms) ? undefined : ms;
  }

  wholeNumber(name: string): number | undefined {
    const value = this.text(name);
    if (value === undefined) return undefined;
    if (!/^\d{1,9}$/.test(value)) this.problems.push(`${name} must be a whole number, not "${value.slice(0, 64)}"`);
    return /^\d{1,9}$/.test(value) ? Number(value) : undefined;
  }

  oneOf<T extends string>(name: string, allowed: readonly T[]): T | undefined {
    const value = this.text(name);
    if (value === undefined) return undefined;
    if (!(allowed as readonly string[]).includes(value)) this.problems.push(`${name} must be one of ${allowed.join(', ')}`);
    return (allowed as readonly string[]).includes(value) ? (value as T) : undefined;
  }

  /** Throws INVALID_ARGUMENT naming every problem found so far. */
  check(): void {
    if (this.problems.length > 0) throw new AppError(ErrorCode.InvalidArgument, this.problems.join('; '));
  }
}
