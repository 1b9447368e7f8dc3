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

/** What a round carries of the model's response: its text, and the reasoning state replayed with it (round-responses.ts). */
export interface FormattableResponse {
  text?: string;
  /** The provider's own items, each as recorded. */
  reasoning?: JsonObject[];
  /** By tool call id as replayed (Gemini and Responses replay the recorded ids). */
  callSignatures?: Record<string, string>;
  callItemIds?: Record<string, string>;
}

export interface FormattableRound {
  calls: readonly FormattableCall[];
  response?: FormattableResponse;
  /** Gemini: the round's first function call carries Google's placeholder signature. */
  reasoningPlaceholder?: boolean;
}

/** Google's documented stand-in for a thought signature a function call of the current turn lacks. */
export const GEMINI_PLACEHOLDER_SIGNATURE = 'skip_thought_signature_validator';

export interface OpenAiAssistantToolCallMessage {
  role: 'assistant';
  /** The round's own text, when the model said something beside its calls. */
  content: string | null;
  tool_calls: Array<{ id: string; type: 'function'; function: { name: string; arguments: string } }>;
}

export interface OpenAiToolMessage {
  role: 'tool';
  tool_call_id: string;
  content: string;
}

/** An Anthropic `thinking` or `redacted_thinking` block, as the model produced it (signature included). */
export type AnthropicThinkingBlock =
  { type: 'thinking'; thinking: string; signature: string } | { type: 'redacted_thinking'; data: string };

export interface AnthropicAssistantMessage {
  role: 'assistant';
  /** Thinking blocks first (the API requires them before the tool_use they led to), then the text, then the tool uses. */
  content: Array<
    AnthropicThinkingBlock | { type: 'text'; text: string } | { type: 'tool_use'; id: string; name: string; input: JsonObject }
  >;
}

export interface AnthropicToolResultMessage {
  role: 'user';
  content: Array<{ type: 'tool_result'; tool_use_id: string; content: string; is_error: boolean }>;
}

/**
 * OpenAI Responses input items. A function call's item `id` (`fc_...`) only
 * with its reasoning item before it: reasoning models refuse a replayed
 * `fc_` id without it.
 */
export interface OpenAiResponsesFunctionCall {
  type: 'function_call';
  id?: string;
  call_id: string;
  name: string;
  arguments: string;
}

/** A `reasoning` item as the model produced it (its `encrypted_content` included). */
export interface OpenAiResponsesReasoningItem {
  type: 'reasoning';
  id: string;
  summary: Array<{ type: 'summary_text'; text: string }>;
  encrypted_content?: string | null;
  content?: Array<{ type: 'reasoning_text'; text: string }>;
  status?: 'in_progress' | 'completed' | 'incomplete';
}

/** The round's own text, as an assistant input message (an output message would need the id and status of the response it came in). */
export interface OpenAiResponsesOutputMessage {
  type: 'message';
  role: 'assistant';
  content: string;
}

export interface OpenAiResponsesFunctionCallOutput {
  type: 'function_call_output';
  call_id: string;
  output: string;
}

export interface GeminiModelContent {
  role: 'model';
  /** Thought parts first, as recorded, then the text, then the function calls (a step's first one with its signature). */
  parts: Array<JsonObject | { text: string } | { functionCall: { id: string; name: string; args: JsonObject }; thoughtSignature?: string }>;
}

export interface GeminiUserContent {
  role: 'user';
  parts: Array<{ functionResponse: { id: string; name: string; response: JsonObject } }>;
}

/** A Bedrock `reasoningContent` block, as the model produced it. */
export type BedrockReasoningBlock = JsonObject & { reasoningContent: JsonObject };

export interface BedrockAssistantMessage {
  role: 'assistant';
  /** Reasoning blocks first, then the text, then the tool uses. */
  content: Array<BedrockReasoningBlock | { text: string } | { toolUse: { toolUseId: string; name: string; input: JsonObject } }>;
}

export interface BedrockToolResultMessage {
  role: 'user';
  content: Array<{
    toolResult: { toolUseId: string; content: Array<{ text: string } | { json: JsonValue }>; status: 'success' | 'error' };
  }>;
}

/** Each format's messages, by the format's name (see HISTORY_FORMAT_TRANSLATORS for how they are made). */
export interface ProviderMessagesByFormat {
  /** OpenAI chat completions: an assistant message (the round's text, `tool_calls`), then a `tool` message per call. */
  openai_chat: OpenAiAssistantToolCallMessage | OpenAiToolMessage;
  /** Anthropic Messages: an assistant message (thinking, text, `tool_use` blocks), then one user message of `tool_result` blocks. */
  anthropic_messages: AnthropicAssistantMessage | AnthropicToolResultMessage;
  /** OpenAI Responses input items: the round's reasoning items and text, a `function_call` per call, then a `function_call_output` per call. */
  openai_responses:
    OpenAiResponsesReasoningItem | OpenAiResponsesOutputMessage | OpenAiResponsesFunctionCall | OpenAiResponsesFunctionCallOutput;
  /** Gemini `contents`: a `model` content (thought parts, text, `functionCall` parts), then a `user` content of `functionResponse` parts. */
  gemini: GeminiModelContent | GeminiUserContent;
  /** Bedrock Converse `messages`: an assistant message (reasoning, text, `toolUse` blocks), then a user message of `toolResult` blocks. */
  bedrock_converse: BedrockAssistantMessage | BedrockToolResultMessage;
}

export type ProviderMessage = ProviderMessagesByFormat[keyof ProviderMessagesByFormat];

/** OpenAI chat: per round, one assistant message with tool_calls, then one tool message per call, in order. */
export function toOpenAiChatMessages(rounds: readonly FormattableRound[]): Array<OpenAiAssistantToolCallMessage | OpenAiToolMessage> {
  return rounds.flatMap((round) => [
    {
      role: 'assistant' as const,
      // The round's own text; OpenAI chat carries no reasoning.
      content: round.response?.text ?? null,
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
      content: [
        ...reasoningOf<AnthropicThinkingBlock>(round),
        ...textBlock(round.response?.text),
        ...round.calls.map((c) => ({
          type: 'tool_use' as const,
          id: anthropicToolUseId(c.toolCallId),
          name: c.toolName,
          input: c.arguments,
        })),
      ],
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
 * The round's reasoning items in the provider's own shapes: a round carries
 * reasoning only to the provider it was recorded through (round-responses.ts,
 * REASONING_RULES), which produced them; they go back as published, unchecked.
 */
function reasoningOf<Item>(round: FormattableRound): Item[] {
  return (round.response?.reasoning ?? []) as unknown as Item[];
}

/** The round's text as a content block, when it has one. */
function textBlock(text: string | undefined): Array<{ type: 'text'; text: string }> {
  return text === undefined || text === '' ? [] : [{ type: 'text', text }];
}

/**
 * OpenAI Responses: per round, its reasoning items (as recorded), its text
 * as an output message, a `function_call` item per call (with its `fc_` item
 * id when the reasoning it follows is replayed too), then a
 * `function_call_output` item per call, in order. An error result stays a
 * plain output text that says it failed (the API has no error flag).
 */
export function toOpenAiResponsesItems(
  rounds: readonly FormattableRound[],
): Array<OpenAiResponsesReasoningItem | OpenAiResponsesOutputMessage | OpenAiResponsesFunctionCall | OpenAiResponsesFunctionCallOutput> {
  return rounds.flatMap((round) => [
    ...reasoningOf<OpenAiResponsesReasoningItem>(round),
    ...outputMessage(round.response?.text),
    ...round.calls.map((c) => ({
      type: 'function_call' as const,
      ...itemIdOf(round, c.toolCallId),
      call_id: c.toolCallId,
      name: c.toolName,
      arguments: JSON.stringify(c.arguments),
    })),
    ...round.calls.map((c) => ({ type: 'function_call_output' as const, call_id: c.toolCallId, output: errorText(c) })),
  ]);
}

function outputMessage(text: string | undefined): OpenAiResponsesOutputMessage[] {
  return text === undefined || text === '' ? [] : [{ type: 'message', role: 'assistant', content: text }];
}

/** A call's own `fc_` id, only beside the reasoning item it follows (without it the API refuses the id). */
function itemIdOf(round: FormattableRound, callId: string): { id?: string } {
  const id = round.response?.reasoning?.length ? round.response.callItemIds?.[callId] : undefined;
  return id === undefined ? {} : { id };
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
      parts: [
        ...(round.response?.reasoning ?? []),
        ...(round.response?.text ? [{ text: round.response.text }] : []),
        ...round.calls.map((c, i) => ({
          functionCall: { id: c.toolCallId, name: c.toolName, args: c.arguments },
          ...geminiSignatureOf(round, c.toolCallId, i),
        })),
      ],
    },
    {
      role: 'user' as const,
      parts: round.calls.map((c) => ({ functionResponse: { id: c.toolCallId, name: c.toolName, response: geminiResponse(c) } })),
    },
  ]);
}

/**
 * A function call's thought signature: the one recorded for it; else, for
 * the round's first call in a turn that goes on, Google's placeholder
 * (Gemini refuses a step of the current turn whose first call has none).
 */
function geminiSignatureOf(round: FormattableRound, callId: string, at: number): { thoughtSignature?: string } {
  const recorded = round.response?.callSignatures?.[callId];
  if (recorded !== undefined) return { thoughtSignature: recorded };
  return at === 0 && round.reasoningPlaceholder === true ? { thoughtSignature: GEMINI_PLACEHOLDER_SIGNATURE } : {};
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
      content: [
        ...reasoningOf<BedrockReasoningBlock>(round),
        ...(round.response?.text ? [{ text: round.response.text }] : []),
        ...round.calls.map((c) => ({ toolUse: { toolUseId: bedrockToolUseId(c.toolCallId), name: c.toolName, input: c.arguments } })),
      ],
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
