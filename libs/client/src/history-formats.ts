import type {
  AnthropicAssistantMessage,
  AnthropicToolResultMessage,
  OpenAiAssistantToolCallMessage,
  OpenAiToolMessage,
} from '../../domain/src/replay/provider-messages';
import type { Round } from './generated/toolhistory/v1/toolhistory';
import type { JsonValue } from './tool-event-types';

export type { AnthropicAssistantMessage, AnthropicToolResultMessage, OpenAiAssistantToolCallMessage, OpenAiToolMessage };

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
  openai: OpenAiAssistantToolCallMessage | OpenAiToolMessage;
  anthropic: AnthropicAssistantMessage | AnthropicToolResultMessage;
  'ai-sdk': AiSdkAssistantMessage | AiSdkToolMessage;
}
export type HistoryFormatName = keyof HistoryMessages;
export const HISTORY_FORMAT_NAMES: readonly HistoryFormatName[] = ['openai', 'anthropic', 'ai-sdk'];

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
