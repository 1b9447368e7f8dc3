import { InvalidToolEventError, PersistHookError } from './tool-history-errors';
import type { JsonValue } from './tool-event-types';

/** Which payload a persist hook is given: a call's arguments, or a result. */
export type PayloadKind = 'arguments' | 'result';

export interface PersistContext {
  kind: PayloadKind;
  /** The tool the payload belongs to (a result's: the one given with it, else its call's). */
  toolName: string;
}

/**
 * What to publish of a payload: the payload itself (redacted as the hook
 * likes; arguments must stay a JSON object, a result must not be null),
 * `'metadata'` (ids, name, times and the payload's size in bytes, no
 * payload), or `null` (ids, name and times only: what usage needs).
 */
export type PersistAnswer = JsonValue | 'metadata' | null;

/**
 * Runs in the worker on each call's arguments and each result before they
 * are published, so what the host does not want kept never reaches the
 * broker. It is given its own copy of the payload.
 */
export type PersistHook = (payload: JsonValue, context: PersistContext) => PersistAnswer;

/** One hook for every tool, or hooks by tool name (tools not named are published as they are). */
export type PersistOption = PersistHook | Readonly<Record<string, PersistHook>>;

/** What the producer kept of a payload, as the event says it (`redaction.persist`). */
export type PublishedPersist = 'full' | 'metadata' | 'none';

/** Throws a TypeError unless the option is a function or an object of functions. */
export function checkPersistOption(option: unknown): void {
  if (option === undefined || typeof option === 'function') return;
  if (typeof option !== 'object' || option === null || Array.isArray(option))
    throw new TypeError('persist: must be a function, or an object of tool names and functions');
  const problems = Object.entries(option)
    .filter(([, hook]) => typeof hook !== 'function')
    .map(([tool]) => `persist.${tool}: must be a function`);
  if (problems.length > 0) throw new TypeError(problems.join('; '));
}

/** The hook for a tool's payloads, if any. */
export function persistHookFor(option: PersistOption | undefined, toolName: string): PersistHook | undefined {
  if (option === undefined) return undefined;
  if (typeof option === 'function') return option;
  return Object.hasOwn(option, toolName) ? option[toolName] : undefined;
}

/** Whether any payload may need a hook: a result whose tool is unknown cannot be published then. */
export const hasPersistHooks = (option: PersistOption | undefined): boolean =>
  option !== undefined && (typeof option === 'function' || Object.keys(option).length > 0);

/** The fields a hook's answer sets on the event: the payload to send, and what the event says of it. */
export interface PersistedPayload {
  payload: JsonValue;
  persist: PublishedPersist;
  /** With `metadata`: the size in bytes of the payload's UTF-8 JSON, as a cut payload's `originalBytes`. */
  originalBytes?: number;
}

/**
 * Runs the hook on a copy of the payload and turns its answer into what is
 * published. A hook that throws, or answers with something that is not a
 * payload of this kind, fails the publication: nothing is ever sent raw
 * because a hook went wrong.
 */
export function applyPersistHook(hook: PersistHook, payload: JsonValue, context: PersistContext): PersistedPayload {
  let answer: PersistAnswer;
  try {
    answer = hook(structuredClone(payload), { ...context });
  } catch (error) {
    throw new PersistHookError(context.toolName, context.kind, error);
  }
  const empty: JsonValue = context.kind === 'arguments' ? {} : null;
  if (answer === null) return { payload: empty, persist: 'none' };
  if (answer === 'metadata') return { payload: empty, persist: 'metadata', originalBytes: Buffer.byteLength(JSON.stringify(payload)) };
  const problem = answerProblem(answer, context.kind);
  if (problem !== undefined) throw new InvalidToolEventError([`persist hook of ${context.toolName} (${context.kind}): ${problem}`]);
  return { payload: answer, persist: 'full' };
}

function answerProblem(answer: unknown, kind: PayloadKind): string | undefined {
  if (answer === undefined) return "returned nothing (return the payload to publish, 'metadata', or null)";
  if (kind === 'arguments' && (typeof answer !== 'object' || Array.isArray(answer)))
    return "must return arguments as a JSON object, 'metadata' or null";
  return undefined;
}
