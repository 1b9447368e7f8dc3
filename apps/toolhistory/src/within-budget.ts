import { AppError, ErrorCode } from '@toolhistory/errors';

/**
 * Runs work that must finish within `budgetMs`: at the deadline its signal
 * aborts (so database statements are cancelled rather than left running)
 * and the answer is DEADLINE_EXCEEDED. Shared by the gRPC and HTTP edges.
 */
export async function withinBudget<T>(what: string, budgetMs: number, work: (signal: AbortSignal) => Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new AbortController();
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
  }
}
