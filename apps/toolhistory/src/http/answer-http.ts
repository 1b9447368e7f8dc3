import type { Logger } from 'pino';
import { toAppError } from '@toolhistory/errors';
import { loggableIds } from '../loggable-ids';
import { withinBudget } from '../within-budget';
import { httpStatusOf, toHttpException } from './http-status';

/**
 * Runs one HTTP route's work within its budget and answers every failure
 * the same way, as answerUnary does for RPCs: the classified status, a
 * caller's mistake logged as one info line, our own faults with their cause.
 */
export async function answerHttp<T>(
  log: Logger,
  route: string,
  rawIds: Record<string, unknown>,
  budgetMs: number,
  work: (signal: AbortSignal) => Promise<T>,
): Promise<T> {
  try {
    return await withinBudget(route, budgetMs, work);
  } catch (thrown) {
    const ids = loggableIds(rawIds);
    const error = toAppError(thrown);
    if (httpStatusOf(error) < 500) log.info({ ...ids, code: error.code, reason: error.message }, `${route} refused`);
    else log.warn({ err: thrown, ...ids }, `${route} failed`);
    throw toHttpException(error);
  }
}
