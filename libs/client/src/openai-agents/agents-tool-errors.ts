/**
 * How a tool's failure shows in what the SDK sent the model: its own error
 * texts (a tool that threw, one that timed out), and the calls
 * toolErrorFunction marked. The run recorder and the session both read them.
 */
import type { RunContext } from '@openai/agents';

/** The SDK's default tool error text (its default errorFunction). */
export const DEFAULT_TOOL_ERROR_TEXT = 'An error occurred while running the tool. Please try again.';
/** The SDK's default text for a tool that timed out with timeoutBehavior 'error_as_result'. */
const DEFAULT_TIMEOUT_TEXT = /^Tool '.*' timed out after \d+ms\.$/s;

/** Whether `text` is one the SDK sends the model for a tool that threw or timed out (its default errorFunction's, its timeout's). */
export function isSdkErrorText(text: string | undefined): boolean {
  return text !== undefined && (text === DEFAULT_TOOL_ERROR_TEXT || DEFAULT_TIMEOUT_TEXT.test(text));
}

const markedErrors = new WeakMap<object, Set<string>>();

/** Marks the output of call `callId` of the run of `runContext` as an error (see toolErrorFunction). */
export function markToolError(runContext: object, callId: string): void {
  const marked = markedErrors.get(runContext) ?? new Set<string>();
  marked.add(callId);
  markedErrors.set(runContext, marked);
}

/** Whether the output of call `callId` of the run of `runContext` was marked as an error. */
export function isMarkedToolError(runContext: object, callId: string): boolean {
  return markedErrors.get(runContext)?.has(callId) === true;
}

/** What the SDK gives a tool's errorFunction besides the error: the call, unless its input was redacted. */
export interface ToolErrorDetails {
  toolCall?: { callId?: string };
}

/**
 * An `errorFunction` for the SDK's `tool()` that has the recorder record the
 * call's output as an error: the model is sent the SDK's default error text,
 * or what `format` makes of the error (the SDK's own default never shows the
 * error to the model).
 */
export function toolErrorFunction<C = unknown>(
  format?: (error: unknown, runContext: RunContext<C>, details?: ToolErrorDetails) => string | Promise<string>,
): (runContext: RunContext<C>, error: unknown, details?: ToolErrorDetails) => string | Promise<string> {
  return (runContext, error, details) => {
    const callId = details?.toolCall?.callId;
    if (typeof callId === 'string') markToolError(runContext, callId);
    return format === undefined ? DEFAULT_TOOL_ERROR_TEXT : format(error, runContext, details);
  };
}
