// Plain files of the contract with no imports of their own: bundled into the package when it is built.
import { MAX_ID_LENGTH, MAX_INDEX, MAX_USAGE_ENTRIES } from '../../../contract/src/tool-event.types';
import type { RunFailureDetail, TokenUsage } from '../tool-event-types';

/*
 * What a framework hands over, made to fit the contract's bounds, so that a
 * long run or a long text never fails the turn. (Payloads over the event
 * size are cut by the publisher itself: see payload-truncation.ts.)
 */

/** The longest failure message an adapter records: provider errors may quote whole response bodies. */
export const MAX_FAILURE_MESSAGE_LENGTH = 4_000;

/** An approval's reason longer than this is cut: it is for a person to read, not a payload. */
export const MAX_APPROVAL_REASON_LENGTH = 4_000;

/** A framework's token count as the contract takes it: a whole number from 0 to MAX_INDEX (anything else counts 0). */
export function tokenCount(value: unknown): number {
  return typeof value === 'number' && Number.isFinite(value) && value > 0 ? Math.min(Math.trunc(value), MAX_INDEX) : 0;
}

/**
 * The contract allows MAX_USAGE_ENTRIES model calls per run: the calls
 * beyond fold into the last entry, so the totals stay right (up to
 * MAX_INDEX); the folded entry names a model only when all of its calls
 * used the same one.
 */
export function boundedUsage(usage: readonly TokenUsage[]): TokenUsage[] {
  if (usage.length <= MAX_USAGE_ENTRIES) return [...usage];
  const tail = usage.slice(MAX_USAGE_ENTRIES - 1);
  const models = new Set(tail.map((u) => u.model));
  const [model] = models;
  return [
    ...usage.slice(0, MAX_USAGE_ENTRIES - 1),
    {
      inputTokens: tokenCount(tail.reduce((sum, u) => sum + u.inputTokens, 0)),
      outputTokens: tokenCount(tail.reduce((sum, u) => sum + u.outputTokens, 0)),
      ...(models.size === 1 && model !== undefined ? { model } : {}),
    },
  ];
}

/** RunFailed's code for a run its host aborted (or cancelled), in every adapter of both client languages that sees the abort. */
export const ABORTED = 'aborted';

/** An AbortSignal's standard error (a DOMException or an Error named `AbortError`): the run or call was aborted. */
export function isAbortError(error: unknown): boolean {
  return typeof error === 'object' && error !== null && (error as { name?: unknown }).name === 'AbortError';
}

/** RunFailed's error for an aborted run, its message the abort's own when it has one. */
export function abortedFailure(message = 'the run was aborted before it completed'): RunFailureDetail {
  return fittedFailure(ABORTED, message);
}

/** A failure whose code is an id (at most MAX_ID_LENGTH) and whose message is at most MAX_FAILURE_MESSAGE_LENGTH. */
export function fittedFailure(code: string, message: string): RunFailureDetail {
  return { code: code.slice(0, MAX_ID_LENGTH), message: message.slice(0, MAX_FAILURE_MESSAGE_LENGTH) };
}

/** An approval's reason as recorded: cut to MAX_APPROVAL_REASON_LENGTH. */
export function fittedReason(reason: string): string {
  return reason.slice(0, MAX_APPROVAL_REASON_LENGTH);
}

/** A thrown value as text, as the AI SDK shows an error to the model (its getErrorMessage). */
export function errorText(error: unknown): string {
  if (error === null || error === undefined) return 'unknown error';
  if (typeof error === 'string') return error;
  if (isErrorLike(error)) return error.message;
  return JSON.stringify(error) ?? String(error);
}

/** By shape, not instanceof: a DOMException (an abort) or an error from another realm is no `Error` instance there. */
export function isErrorLike(value: unknown): value is { name: string; message: string } {
  const candidate = value as { name?: unknown; message?: unknown } | null;
  return typeof candidate === 'object' && candidate !== null && typeof candidate.name === 'string' && typeof candidate.message === 'string';
}
