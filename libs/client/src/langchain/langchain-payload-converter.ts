import { AIMessage, ToolMessage, type BaseMessage } from '@langchain/core/messages';
// A plain file of the contract with no imports of its own: bundled into the package when it is built.
import { MAX_ID_LENGTH, MAX_INDEX } from '../../../contract/src/tool-event.types';
import { abortedFailure, fittedFailure, isAbortError } from '../recording/contract-fit';
import type { ToolOutcome } from '../recording/recorded-run';
import type { JsonObject, JsonValue, RunFailureDetail, TokenUsage } from '../tool-event-types';

/** What a tool run produced, as a ToolResultReceived carries it. */
export type { ToolOutcome };

/** A value as JSON (what JSON.stringify keeps of it); a value JSON cannot hold becomes its string form. */
export function toJsonValue(value: unknown): JsonValue {
  if (typeof value === 'string') return value;
  try {
    const json = JSON.stringify(value);
    return json === undefined ? null : (JSON.parse(json) as JsonValue);
  } catch {
    return String(value);
  }
}

/** A tool call's arguments as the contract wants them: a JSON object (anything else is wrapped as `{ input }`). */
export function toJsonObject(value: unknown): JsonObject {
  const json = toJsonValue(value);
  if (json !== null && typeof json === 'object' && !Array.isArray(json)) return json;
  return json === null ? {} : { input: json };
}

/**
 * What the model is given back for a tool run's output: a ToolMessage's
 * content (its `status: 'error'` makes it an error result), a Command's
 * ToolMessage for the call, or the plain value a tool returned when it was
 * called without a tool call id. Never null (the contract refuses it).
 */
export function toolOutcomeOf(output: unknown, toolCallId?: string): ToolOutcome {
  const message = ToolMessage.isInstance(output)
    ? output
    : toolMessagesIn(output).find((m) => !toolCallId || m.tool_call_id === toolCallId);
  if (message) return { result: nonNull(toJsonValue(message.content)), isError: message.status === 'error' };
  return { result: nonNull(toJsonValue(output)), isError: false };
}

/** The text an error result records: what String(error) says, e.g. `Error: card declined`. */
export function errorResultOf(error: unknown): string {
  if (error instanceof Error) return String(error);
  if (typeof error === 'string') return error;
  const json = toJsonValue(error);
  return typeof json === 'string' ? json : JSON.stringify(json);
}

/** RunFailed's error: `aborted` for an aborted run; else LangChain's error code, a Node error code, or the error's class name; and its message. */
export function failureDetailOf(error: unknown): RunFailureDetail {
  if (isRunAbort(error)) return abortedFailure();
  const fields = (typeof error === 'object' && error !== null ? error : {}) as { lc_error_code?: unknown; code?: unknown; name?: unknown };
  const code = [fields.lc_error_code, fields.code, fields.name].find((c): c is string => typeof c === 'string' && c.length > 0) ?? 'Error';
  // A failure message longer than the contract's fit is cut: it explains, the full error stays with the host.
  return fittedFailure(code, error instanceof Error ? error.message : errorResultOf(error));
}

/**
 * The ToolMessages an output carries: the output itself, an array of them,
 * `{ messages: [...] }` (a LangGraph node's update), or a Command's
 * `update.messages`.
 */
export function toolMessagesIn(output: unknown): ToolMessage[] {
  if (ToolMessage.isInstance(output)) return [output];
  if (Array.isArray(output)) return output.flatMap((item) => (ToolMessage.isInstance(item) ? [item] : toolMessagesIn(commandUpdate(item))));
  if (typeof output !== 'object' || output === null) return [];
  const { messages } = output as { messages?: unknown };
  if (Array.isArray(messages)) return messages.filter((m): m is ToolMessage => ToolMessage.isInstance(m));
  const update = commandUpdate(output);
  return update === undefined ? [] : toolMessagesIn(update);
}

/** A model output's tool calls (none when it is no AI message). */
export function toolCallsOf(message: BaseMessage | undefined): NonNullable<AIMessage['tool_calls']> {
  return message !== undefined && AIMessage.isInstance(message) ? (message.tool_calls ?? []) : [];
}

/**
 * One model call's tokens: the message's usage_metadata, else the
 * provider's llmOutput token counts; undefined when it reports none.
 * The model is the one the response names, else the one it was called with.
 */
export function tokenUsageOf(message: BaseMessage | undefined, llmOutput: unknown, calledModel?: string): TokenUsage | undefined {
  const usage = message !== undefined && AIMessage.isInstance(message) ? message.usage_metadata : undefined;
  const legacy = (llmOutput as { tokenUsage?: { promptTokens?: unknown; completionTokens?: unknown } } | undefined)?.tokenUsage;
  const inputTokens = usage?.input_tokens ?? legacy?.promptTokens;
  const outputTokens = usage?.output_tokens ?? legacy?.completionTokens;
  if (!isCount(inputTokens) || !isCount(outputTokens)) return undefined;
  const metadata = message?.response_metadata as { model_name?: unknown; model?: unknown } | undefined;
  const model = [metadata?.model_name, metadata?.model, calledModel].find(
    (m): m is string => typeof m === 'string' && m.length > 0 && m.length <= MAX_ID_LENGTH,
  );
  return model === undefined ? { inputTokens, outputTokens } : { inputTokens, outputTokens, model };
}

/** The contract allows MAX_USAGE_ENTRIES model calls per run: the calls beyond fold into the last entry (the recording core's rule). */
export { boundedUsage } from '../recording/contract-fit';

function isCount(value: unknown): value is number {
  return typeof value === 'number' && Number.isInteger(value) && value >= 0 && value <= MAX_INDEX;
}

function nonNull(value: JsonValue): JsonValue {
  return value === null ? '' : value;
}

/** A LangGraph Command's update (recognised by shape: this package does not depend on LangGraph). */
function commandUpdate(value: unknown): unknown {
  if (typeof value !== 'object' || value === null) return undefined;
  const command = value as { lg_name?: unknown; update?: unknown };
  return command.lg_name === 'Command' ? command.update : undefined;
}

/** An AbortError, or the plain `Error(message)` a LangChain library throws for an abort. */
function isAbortSaying(error: unknown, message: 'Abort' | 'Aborted'): boolean {
  return isAbortError(error) || (error instanceof Error && error.name === 'Error' && error.message === message);
}

/** An aborted run: LangGraph rejects one with `Error('Abort')`, whatever the signal's reason; else an AbortError. */
export function isRunAbort(error: unknown): boolean {
  return isAbortSaying(error, 'Abort');
}

/**
 * A tool run its signal aborted: an AbortError, or `Error('Aborted')`, which
 * LangChain throws for a signal aborted without an Error or text reason (an
 * abort with an Error of the host's own is that error, and reads as the tool's).
 */
export function isToolAbort(error: unknown): boolean {
  return isAbortSaying(error, 'Aborted');
}

/**
 * LangGraph's control-flow signals (an interrupt, a command for the parent
 * graph) travel as errors with `is_bubble_up`: they pause or redirect a run,
 * they are no failure of it or of a tool.
 */
export function isControlFlowSignal(error: unknown): boolean {
  return typeof error === 'object' && error !== null && (error as { is_bubble_up?: unknown }).is_bubble_up === true;
}
