import type { ChatCompletion, ChatCompletionAssistantMessageParam, ChatCompletionMessage } from 'openai/resources/chat/completions';
// Plain files of the contract with no imports of their own: bundled into the package when it is built.
import { jsonDepth } from '../../../contract/src/json-depth';
import { MAX_JSON_DEPTH } from '../../../contract/src/tool-event.types';
import { abortedFailure, isAbortError, tokenCount } from '../recording/contract-fit';
import type { RecordedCall } from '../recording/recorded-run';
import type { JsonObject, JsonValue, RunFailureDetail, TokenUsage } from '../tool-event-types';

/** An assistant message as the SDK returns it, or as the host keeps it to send back. */
export type OpenAiAssistantMessage = ChatCompletionMessage | ChatCompletionAssistantMessageParam;

/** What a tool returned: text, or JSON (sent to the model as its JSON text). */
export type OpenAiToolOutput = JsonValue;

/** One tool call of an assistant message, as recorded: its round is the message's (`sequenceIndex`: its position in `tool_calls`; `arguments`: parsed, see parseToolArguments). */
export type OpenAiRecordedToolCall = Omit<RecordedCall, 'roundIndex'>;

export function isChatCompletion(value: ChatCompletion | OpenAiAssistantMessage): value is ChatCompletion {
  return 'choices' in value;
}

/** The message itself, or a completion's first choice's message (a tool loop asks for one choice). */
export function assistantMessageOf(value: ChatCompletion | OpenAiAssistantMessage): OpenAiAssistantMessage {
  if (!isChatCompletion(value)) return value;
  const choice = value.choices[0];
  if (choice === undefined) throw new TypeError(`chat completion ${JSON.stringify(value.id)} has no choices`);
  return choice.message;
}

/**
 * A function call's `arguments` string as the JSON object the contract
 * wants. The model does not always write valid JSON: text that is not a
 * JSON object (or nests deeper than the contract allows) is kept as
 * `{"_raw": text}` rather than failing the worker; an empty string is `{}`.
 */
export function parseToolArguments(text: string): JsonObject {
  if (text.trim() === '') return {};
  try {
    const parsed: unknown = JSON.parse(text);
    if (typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed) && jsonDepth(parsed, MAX_JSON_DEPTH) <= MAX_JSON_DEPTH) {
      return parsed as JsonObject;
    }
  } catch {
    // Not JSON: kept as text below.
  }
  return { _raw: text };
}

/**
 * The message's function tool calls, in order. Custom (free-text) tool
 * calls are refused: the history replays every call as a function call,
 * which would not be the call the model made.
 */
export function toolCallsOf(message: OpenAiAssistantMessage): OpenAiRecordedToolCall[] {
  return (message.tool_calls ?? []).map((call, sequenceIndex) => {
    // Checked by the field, not by `type`: some OpenAI-compatible servers leave `type` out.
    if (!('function' in call) || typeof call.function !== 'object' || call.function === null) {
      throw new TypeError(
        `tool_calls[${sequenceIndex}] (${JSON.stringify(call.id)}) is a ${JSON.stringify(call.type)} tool call, not a function call: ` +
          'only function tool calls can be recorded and replayed in the chat-completions format',
      );
    }
    return {
      sequenceIndex,
      toolCallId: call.id ?? '',
      toolName: call.function.name,
      arguments: parseToolArguments(call.function.arguments ?? ''),
    };
  });
}

/**
 * The run's finish reason as toolhistory means it: `stop` when the last
 * model call produced no tool calls, whatever the API's own reason (a
 * `length` or `content_filter` answer still had the last round's results in
 * its prompt, so they are replayed); `tool_limit` when it still asked for
 * tools (the loop ended right after executing tools, so that round's results
 * reached no model call).
 */
export function finishReasonOf(last: ChatCompletion | OpenAiAssistantMessage): string {
  return (assistantMessageOf(last).tool_calls?.length ?? 0) > 0 ? 'tool_limit' : 'stop';
}

/** The text of the message: its `content`, or its text parts joined (a refusal, or no content, is no text). */
export function answerTextOf(last: ChatCompletion | OpenAiAssistantMessage): string {
  const { content } = assistantMessageOf(last);
  if (typeof content === 'string') return content;
  return (content ?? []).map((part) => (part.type === 'text' ? part.text : '')).join('');
}

/** One model call's tokens, when the API reported them. */
export function usageOf(completion: ChatCompletion): TokenUsage | undefined {
  if (!completion.usage) return undefined;
  return {
    inputTokens: tokenCount(completion.usage.prompt_tokens),
    outputTokens: tokenCount(completion.usage.completion_tokens),
    ...(completion.model ? { model: completion.model } : {}),
  };
}

/** The contract allows MAX_USAGE_ENTRIES model calls per run: the calls beyond fold into the last entry (the recording core's rule). */
export { boundedUsage } from '../recording/contract-fit';

/** The `content` of the tool message: the text, or the JSON text of a JSON output. */
export function toolMessageContent(output: OpenAiToolOutput): string {
  return typeof output === 'string' ? output : JSON.stringify(output);
}

/** The result to record: JSON as JSON (so the policy's JSON paths apply); `null`, which the contract refuses, as the text the model saw. */
export function toolResultOf(output: OpenAiToolOutput): JsonValue {
  return output === null ? 'null' : output;
}

/**
 * RunFailed's `error` from whatever was thrown: `code` is the error's own
 * string code (the API's `rate_limit_exceeded`, Node's `ECONNRESET`), else
 * its class name (`RateLimitError`, `APIConnectionError`), else `error`;
 * `message` is the error's message.
 */
export function describeRunFailure(error: unknown): RunFailureDetail {
  if (typeof error !== 'object' || error === null) return { code: 'error', message: String(error) };
  const { code, name, message } = error as { code?: unknown; name?: unknown; message?: unknown };
  // The SDK's error classes keep the name `Error`: their constructor names them.
  const className = typeof name === 'string' && name !== '' && name !== 'Error' ? name : error.constructor?.name;
  if (isAbortError(error) || className === 'APIUserAbortError') return abortedFailure(typeof message === 'string' ? message : undefined);
  const chosen = typeof code === 'string' && code !== '' ? code : className && className !== 'Object' ? className : 'error';
  return { code: chosen.slice(0, 256), message: typeof message === 'string' ? message : String(error) };
}
