import { type AppError, toAppError } from '@toolhistory/errors';
import { attemptAlone } from './attempt-alone';

/** How a batch went: whole at once (with what that answered), or item by item after the whole failed. */
export type NarrowedDown<R> = { whole: true; result: R } | { whole: false };

/**
 * Tries the items all at once. A failure that may pass (retriable) goes up:
 * the caller retries the whole, and nothing is set aside for an outage. Any
 * other failure is narrowed down to its item: each item is then tried alone
 * (`attemptAlone`, up to ATTEMPTS_PER_EVENT times, a retriable failure still
 * going up), and one that still fails is set aside with its failure while
 * the others go on. What setting aside means (a dead letter, a skip record)
 * is the caller's.
 */
export async function narrowDownFailures<T, R>(
  items: readonly T[],
  tryAll: () => Promise<R>,
  tryOne: (item: T) => Promise<void>,
  setAside: (item: T, failure: AppError) => Promise<void>,
): Promise<NarrowedDown<R>> {
  try {
    return { whole: true, result: await tryAll() };
  } catch (thrown) {
    const error = toAppError(thrown);
    if (error.retriable) throw error;
  }
  for (const item of items) {
    const failure = await attemptAlone(() => tryOne(item));
    if (failure) await setAside(item, failure);
  }
  return { whole: false };
}
