import { MAX_ID_CHARS } from '@toolhistory/errors';

/** Ids come from the caller: a log line carries no more of one than the contract allows (both edges log through this). */
export function loggableIds(rawIds: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(rawIds).map(([k, v]) => [k, typeof v === 'string' ? v.slice(0, MAX_ID_CHARS) : v]));
}
