import { AppError, ErrorCode } from '@toolhistory/errors';

/**
 * Runs work that must finish within `budgetMs`: at the deadline its signal
 * aborts (so database statements are cancelled rather than left running)
 * and the answer is DEADLINE_EXCEEDED. When `callerGone` aborts first (the
 * caller cancelled, or went away), the work's signal aborts too: nobody is
 * waiting for the answer, so nothing more is computed or read for it; work
 * that has not started is not started. Shared by the gRPC and HTTP edges.
 */
export async function withinBudget<T>(
  what: string,
  budgetMs: number,
  work: (signal: AbortSignal) => Promise<T>,
  callerGone?: AbortSignal,
): Promise<T> {
  if (callerGone?.aborted) throw callerWentAway(what);
  let timer: NodeJS.Timeout | undefined;
  const deadline = new AbortController();
  const onGone = () => deadline.abort();
  callerGone?.addEventListener('abort', onGone, { once: true });
  const overdue = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      deadline.abort();
      reject(new AppError(ErrorCode.DeadlineExceeded, `${what} did not finish within ${budgetMs} ms`));
    }, budgetMs);
  });
  try {
    return await Promise.race([work(deadline.signal), overdue]);
  } finally {
    clearTimeout(timer);
    callerGone?.removeEventListener('abort', onGone);
  }
}

/** What a call whose caller went away ends with; nobody receives it, but the logs and metrics classify it. */
export const callerWentAway = (what: string) =>
  new AppError(ErrorCode.DeadlineExceeded, `${what}: the caller went away (cancelled, or past its deadline); its work was dropped`);
