/**
 * The message shapes each history format is replayed in, and what a replayed
 * round carries into them. Types only (and Google's placeholder): the client
 * shares them (dependency-cruiser lets it import this file alone); the
 * translators that make them are in rounds-to-provider-messages.ts.
 */
import type { JsonObject, JsonValue } from '@toolhistory/contract';

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
