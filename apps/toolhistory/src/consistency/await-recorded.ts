import type { ConsistencyNeed } from '@toolhistory/domain';
import { AppError, ErrorCode } from '@toolhistory/errors';
import type { ReadAfter, ReadFreshness } from './consistency-gate';

export type { ReadAfter, ReadFreshness } from './consistency-gate';

/** Waits until everything through the token is in what `need` reads (ConsistencyGate.awaitRecorded). */
export type AwaitRecorded = (readAfter: ReadAfter | undefined, need: ConsistencyNeed, signal?: AbortSignal) => Promise<ReadFreshness>;

/** What replay, listings and watches read. */
export const READ_MODEL: ConsistencyNeed = Object.freeze({ kind: 'read-model' });

/**
 * A use case's wait for its caller's token. Without a gate (a use case
 * built with no recording to follow) a token is refused rather than
 * ignored: an answer must never silently lack the caller's events.
 */
export function awaitRecordedWith(
  awaitRecorded: AwaitRecorded | undefined,
  readAfter: ReadAfter | undefined,
  need: ConsistencyNeed,
  signal?: AbortSignal,
): Promise<ReadFreshness> {
  if (readAfter === undefined || readAfter.token === '') return Promise.resolve({ verify: false });
  if (awaitRecorded === undefined) {
    return Promise.reject(new AppError(ErrorCode.NotSupported, 'this reader follows no recording: consistency_token cannot be honoured'));
  }
  return awaitRecorded(readAfter, need, signal);
}

/** Leave the read this share of the caller's budget (at least 50 ms, at most 500 ms): the wait gets the rest. */
export function readAfterOf(token: string | undefined, budgetMs: number): ReadAfter | undefined {
  if (!token) return undefined;
  const answerMs = Math.min(500, Math.max(50, budgetMs * 0.1));
  return { token, waitMs: Math.max(0, budgetMs - answerMs) };
}
