import { type AppError, toAppError } from '@toolhistory/errors';

/** How often one event is tried alone before it counts as the cause of its own failure. */
export const ATTEMPTS_PER_EVENT = 3;

/**
 * Tries work on one event alone, up to ATTEMPTS_PER_EVENT times. A failure
 * that may pass (retriable) is thrown at once: it is no fault of the event.
 * Returns the last failure when every attempt failed, undefined otherwise.
 */
export async function attemptAlone(work: () => Promise<void>): Promise<AppError | undefined> {
  let failure: AppError | undefined;
  for (let attempt = 1; attempt <= ATTEMPTS_PER_EVENT; attempt += 1) {
    try {
      await work();
      return undefined;
    } catch (thrown) {
      failure = toAppError(thrown);
      if (failure.retriable) throw failure;
    }
  }
  return failure;
}
