import type { JsonObject, JsonValue } from '@toolhistory/contract';
import { anthropicToolUseId, bedrockToolUseId } from './replayed-tool-call-id';

/** The formats a history is replayed in, by the API whose input they are (declared in the contract, with their other names). */
export type { HistoryFormat } from '@toolhistory/contract';

/** The fields of a replayed call the provider formats need. */
export interface FormattableCall {
  toolCallId: string;
  toolName: string;
  arguments: JsonObject;
  result: string;
  isError: boolean;
  /** The recorded result when it is JSON rather than text (none for a notice): formats that carry JSON use it as it is. */
  resultJson?: JsonValue;
}

export interface FormattableRound {
  calls: readonly FormattableCall[];
}

export interface OpenAiAssistantToolCallMessage {
  role: 'assistant';
  content: null;
  tool_calls: Array<{ id: string; type: 'function'; function: { name: string; arguments: string } }>;
}

export interface OpenAiToolMessage {
  role: 'tool';
  tool_call_id: string;
  content: string;
}

export interface AnthropicAssistantMessage {
  role: 'assistant';
  content: Array<{ type: 'tool_use'; id: string; name: string; input: JsonObject }>;
}

export interface AnthropicToolResultMessage {
  role: 'user';
  content: Array<{ type: 'tool_result'; tool_use_id: string; content: string; is_error: boolean }>;
}

/** OpenAI Responses input items. No item `id`: a replayed `fc_` id without its reasoning item is refused by reasoning models. */
export interface OpenAiResponsesFunctionCall {
  type: 'function_call';
  call_id: string;
  name: string;
  arguments: string;
}

export interface OpenAiResponsesFunctionCallOutput {
  type: 'function_call_output';
  call_id: string;
  output: string;
}

export interface GeminiModelContent {
  role: 'model';
  parts: Array<{ functionCall: { id: string; name: string; args: JsonObject } }>;
}

export interface GeminiUserContent {
  role: 'user';
  parts: Array<{ functionResponse: { id: string; name: string; response: JsonObject } }>;
}

export interface BedrockAssistantMessage {
  role: 'assistant';
  content: Array<{ toolUse: { toolUseId: string; name: string; input: JsonObject } }>;
}

export interface BedrockToolResultMessage {
  role: 'user';
  content: Array<{
    toolResult: { toolUseId: string; content: Array<{ text: string } | { json: JsonValue }>; status: 'success' | 'error' };
  }>;
}

/** Each format's messages, by the format's name (see HISTORY_FORMAT_TRANSLATORS for how they are made). */
export interface ProviderMessagesByFormat {
  /** OpenAI chat completions: an assistant message with `tool_calls`, then a `tool` message per call. */
  openai_chat: OpenAiAssistantToolCallMessage | OpenAiToolMessage;
  /** Anthropic Messages: an assistant message of `tool_use` blocks, then one user message of `tool_result` blocks. */
  anthropic_messages: AnthropicAssistantMessage | AnthropicToolResultMessage;
  /** OpenAI Responses input items: a `function_call` per call, then a `function_call_output` per call (no item ids). */
  openai_responses: OpenAiResponsesFunctionCall | OpenAiResponsesFunctionCallOutput;
  /** Gemini `contents`: a `model` content of `functionCall` parts, then a `user` content of `functionResponse` parts. */
  gemini: GeminiModelContent | GeminiUserContent;
  /** Bedrock Converse `messages`: an assistant message of `toolUse` blocks, then a user message of `toolResult` blocks. */
  bedrock_converse: BedrockAssistantMessage | BedrockToolResultMessage;
}

export type ProviderMessage = ProviderMessagesByFormat[keyof ProviderMessagesByFormat];

/** OpenAI chat: per round, one assistant message with tool_calls, then one tool message per call, in order. */
export function toOpenAiChatMessages(rounds: readonly FormattableRound[]): Array<OpenAiAssistantToolCallMessage | OpenAiToolMessage> {
  return rounds.flatMap((round) => [
    {
      role: 'assistant' as const,
      content: null,
      tool_calls: round.calls.map((c) => ({
        id: c.toolCallId,
        type: 'function' as const,
        function: { name: c.toolName, arguments: JSON.stringify(c.arguments) },
      })),
    },
    ...round.calls.map((c) => ({ role: 'tool' as const, tool_call_id: c.toolCallId, content: c.result })),
  ]);
}

/** Anthropic messages: per round, one assistant message of tool_use blocks, then ONE user message of all its tool_result blocks. */
export function toAnthropicMessages(rounds: readonly FormattableRound[]): Array<AnthropicAssistantMessage | AnthropicToolResultMessage> {
  return rounds.flatMap((round) => [
    {
      role: 'assistant' as const,
      content: round.calls.map((c) => ({
        type: 'tool_use' as const,
        id: anthropicToolUseId(c.toolCallId),
        name: c.toolName,
        input: c.arguments,
      })),
    },
    {
      role: 'user' as const,
      content: round.calls.map((c) => ({
        type: 'tool_result' as const,
        tool_use_id: anthropicToolUseId(c.toolCallId),
        content: c.result,
        is_error: c.isError,
      })),
    },
  ]);
}

/** A notice of ours already says what happened ("[denied] ..."); any other error result is marked as one where the API has no error flag. */
const ERROR_MARK = '[error] ';
const marksError = (call: FormattableCall): boolean => call.isError && !call.result.startsWith('[');
function errorText(call: FormattableCall): string {
  return marksError(call) ? `${ERROR_MARK}${call.result}` : call.result;
}

const isJsonObject = (value: JsonValue | undefined): value is JsonObject =>
  value !== undefined && typeof value === 'object' && value !== null && !Array.isArray(value);

/** The text Responses sends around an error result's text: its error mark (counted with the result, replay-history.ts). */
export function responsesResultWrapping(call: FormattableCall): string {
  return marksError(call) ? ERROR_MARK : '';
}

/** The text Gemini sends around a result's text: its wrapping of what is not a JSON object. Escaping inside is not counted. */
export function geminiResultWrapping(call: FormattableCall): string {
  if (call.isError) return '{"error":""}';
  return isJsonObject(call.resultJson) ? '' : '{"output":""}';
}

/**
 * OpenAI Responses: per round, a `function_call` item per call, then a
 * `function_call_output` item per call, in order. An error result stays a
 * plain output text that says it failed (the API has no error flag).
 */
export function toOpenAiResponsesItems(
  rounds: readonly FormattableRound[],
): Array<OpenAiResponsesFunctionCall | OpenAiResponsesFunctionCallOutput> {
  return rounds.flatMap((round) => [
    ...round.calls.map((c) => ({
      type: 'function_call' as const,
      call_id: c.toolCallId,
      name: c.toolName,
      arguments: JSON.stringify(c.arguments),
    })),
    ...round.calls.map((c) => ({ type: 'function_call_output' as const, call_id: c.toolCallId, output: errorText(c) })),
  ]);
}

/** Gemini's `response` must be an object: a JSON object result as it is, anything else under `output`, an error under `error`. */
function geminiResponse(call: FormattableCall): JsonObject {
  if (call.isError) return { error: call.result };
  return isJsonObject(call.resultJson) ? call.resultJson : { output: call.resultJson ?? call.result };
}

/**
 * Gemini: per round, one `model` content of `functionCall` parts, then one
 * `user` content of `functionResponse` parts with the same ids and names.
 */
export function toGeminiContents(rounds: readonly FormattableRound[]): Array<GeminiModelContent | GeminiUserContent> {
  return rounds.flatMap((round) => [
    {
      role: 'model' as const,
      parts: round.calls.map((c) => ({ functionCall: { id: c.toolCallId, name: c.toolName, args: c.arguments } })),
    },
    {
      role: 'user' as const,
      parts: round.calls.map((c) => ({ functionResponse: { id: c.toolCallId, name: c.toolName, response: geminiResponse(c) } })),
    },
  ]);
}

/**
 * Bedrock Converse: per round, one assistant message of `toolUse` blocks,
 * then one user message of `toolResult` blocks; a JSON result as a `json`
 * block, text as a `text` block, an error with status "error".
 */
export function toBedrockConverseMessages(rounds: readonly FormattableRound[]): Array<BedrockAssistantMessage | BedrockToolResultMessage> {
  return rounds.flatMap((round) => [
    {
      role: 'assistant' as const,
      content: round.calls.map((c) => ({ toolUse: { toolUseId: bedrockToolUseId(c.toolCallId), name: c.toolName, input: c.arguments } })),
    },
    {
      role: 'user' as const,
      content: round.calls.map((c) => ({
        toolResult: {
          toolUseId: bedrockToolUseId(c.toolCallId),
          content: [c.resultJson !== undefined && !c.isError ? { json: c.resultJson } : { text: c.result }],
          status: c.isError ? ('error' as const) : ('success' as const),
        },
      })),
    },
  ]);
}
