import { AppError, toAppError } from '@toolhistory/errors';

export interface BackoffOptions {
  initialDelayMs: number;
  maxDelayMs: number;
  /** Stop retrying (and rethrow) once this says no: shutdown or lost partition. */
  shouldContinue: () => boolean;
  /** Called while waiting, e.g. to keep a Kafka group membership alive. */
  whileWaiting?: () => Promise<void>;
  onRetry?: (error: AppError, attempt: number, delayMs: number) => void;
  /** Which failures to retry; by default the retriable ones (others are rethrown at once). */
  shouldRetry?: (error: AppError) => boolean;
  sleep?: (ms: number) => Promise<void>;
}

const defaultSleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
const isRetriable = (error: AppError) => error.retriable;

/**
 * Retries retriable failures for as long as the caller lets it, with
 * exponential backoff and jitter; a non-retriable failure is rethrown at once.
 */
export async function retryWithBackoff<T>(work: () => Promise<T>, options: BackoffOptions): Promise<T> {
  const sleep = options.sleep ?? defaultSleep;
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await work();
    } catch (thrown) {
      const error = toAppError(thrown);
      if (!(options.shouldRetry ?? isRetriable)(error) || !options.shouldContinue()) throw error;
      const ceiling = Math.min(options.maxDelayMs, options.initialDelayMs * 2 ** Math.min(attempt - 1, 20));
      const delayMs = Math.round(ceiling / 2 + Math.random() * (ceiling / 2));
      options.onRetry?.(error, attempt, delayMs);
      await sleep(delayMs);
      await options.whileWaiting?.().catch(() => undefined);
      if (!options.shouldContinue()) throw error;
    }
  }
}
