import type {
  AnthropicAssistantMessage,
  AnthropicToolResultMessage,
  BedrockAssistantMessage,
  BedrockToolResultMessage,
  GeminiModelContent,
  GeminiUserContent,
  OpenAiAssistantToolCallMessage,
  OpenAiResponsesFunctionCall,
  OpenAiResponsesFunctionCallOutput,
  OpenAiToolMessage,
} from '../../domain/src/replay/provider-messages';
import type { Round } from './generated/toolhistory/v1/toolhistory';
import type { JsonValue } from './tool-event-types';

export type {
  AnthropicAssistantMessage,
  AnthropicToolResultMessage,
  BedrockAssistantMessage,
  BedrockToolResultMessage,
  GeminiModelContent,
  GeminiUserContent,
  OpenAiAssistantToolCallMessage,
  OpenAiResponsesFunctionCall,
  OpenAiResponsesFunctionCallOutput,
  OpenAiToolMessage,
};

/** The Vercel AI SDK's assistant message with tool-call parts (a `ModelMessage`). */
export interface AiSdkAssistantMessage {
  role: 'assistant';
  content: Array<{ type: 'tool-call'; toolCallId: string; toolName: string; input: JsonValue }>;
}

/** The Vercel AI SDK's tool message with tool-result parts (a `ModelMessage`). */
export interface AiSdkToolMessage {
  role: 'tool';
  content: Array<{
    type: 'tool-result';
    toolCallId: string;
    toolName: string;
    output: { type: 'text' | 'error-text'; value: string };
  }>;
}

/** The history formats, by the API whose messages they are. */
export interface HistoryMessages {
  /** OpenAI chat completions: an assistant message with `tool_calls`, then a `tool` message per call. */
  openai: OpenAiAssistantToolCallMessage | OpenAiToolMessage;
  /** Anthropic Messages: an assistant message of `tool_use` blocks, then one user message of `tool_result` blocks. */
  anthropic: AnthropicAssistantMessage | AnthropicToolResultMessage;
  /** The AI SDK's `ModelMessage`s: `tool-call` parts, then `tool-result` parts. */
  'ai-sdk': AiSdkAssistantMessage | AiSdkToolMessage;
  /** OpenAI Responses input items: a `function_call` per call, then a `function_call_output` per call (no item ids). */
  'openai-responses': OpenAiResponsesFunctionCall | OpenAiResponsesFunctionCallOutput;
  /** Gemini `contents`: a `model` content of `functionCall` parts, then a `user` content of `functionResponse` parts. */
  gemini: GeminiModelContent | GeminiUserContent;
  /** Bedrock Converse `messages`: an assistant message of `toolUse` blocks, then a user message of `toolResult` blocks. */
  'bedrock-converse': BedrockAssistantMessage | BedrockToolResultMessage;
}
export type HistoryFormatName = keyof HistoryMessages;
export const HISTORY_FORMAT_NAMES: readonly HistoryFormatName[] = [
  'openai',
  'anthropic',
  'ai-sdk',
  'openai-responses',
  'gemini',
  'bedrock-converse',
];

/**
 * The AI SDK's messages for one turn's replayed rounds: per round one
 * assistant message of tool calls, then one tool message of their results,
 * in the order of the calls. A result is the text the model saw; an error
 * result is `error-text`.
 */
export function toAiSdkMessages(rounds: readonly Round[]): Array<AiSdkAssistantMessage | AiSdkToolMessage> {
  return rounds.flatMap((round) => [
    {
      role: 'assistant' as const,
      content: round.calls.map((call) => ({
        type: 'tool-call' as const,
        toolCallId: call.toolCallId,
        toolName: call.toolName,
        input: JSON.parse(call.argumentsJson) as JsonValue,
      })),
    },
    {
      role: 'tool' as const,
      content: round.calls.map((call) => ({
        type: 'tool-result' as const,
        toolCallId: call.toolCallId,
        toolName: call.toolName,
        output: { type: call.isError ? ('error-text' as const) : ('text' as const), value: call.result },
      })),
    },
  ]);
}
