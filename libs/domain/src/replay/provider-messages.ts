import type { JsonObject } from '@toolhistory/contract';
import { anthropicToolUseId } from './replayed-tool-call-id';

/** The fields of a replayed call the provider formats need. */
export interface FormattableCall {
  toolCallId: string;
  toolName: string;
  arguments: JsonObject;
  result: string;
  isError: boolean;
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

export type ProviderMessage = OpenAiAssistantToolCallMessage | OpenAiToolMessage | AnthropicAssistantMessage | AnthropicToolResultMessage;

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
