import { AIMessage, ToolMessage, type BaseMessage } from '@langchain/core/messages';
import type { Round } from '../generated/toolhistory/v1/toolhistory';
import type { OpenAiAssistantToolCallMessage, OpenAiToolMessage } from '../history-formats';
import { spliceHistory } from '../splice-history';
import { reasoningMessageFields } from './langchain-reasoning';
import type { JsonObject } from '../tool-event-types';

/** Replay history as getReplayHistory returns it, in any format: its turns' structured rounds are what is converted. */
export interface ReplayedTurns {
  turns: ReadonlyArray<{ rounds: readonly Round[]; assistantMessageId: string; afterMessageId?: string }>;
}

/** What toLangChainMessages accepts: a replay history (any format), or OpenAI-format messages. */
export type LangChainHistoryInput = ReplayedTurns | ReadonlyArray<OpenAiAssistantToolCallMessage | OpenAiToolMessage>;

/**
 * LangChain's messages for replayed tool history: per round one AIMessage
 * with the round's tool_calls (and its text, and its reasoning when the
 * replay carries it: ask for the provider's format, or name `provider`,
 * and `model`), then one ToolMessage per call, in order.
 * From a replay history, error results keep `status: 'error'`; OpenAI-format
 * messages carry no error flag.
 */
export function toLangChainMessages(history: LangChainHistoryInput): BaseMessage[] {
  if (isReplayedTurns(history)) return history.turns.flatMap((turn) => roundsToMessages(turn.rounds));
  return openAiToMessages(history);
}

/**
 * The host's conversation with each replayed turn's tool rounds, as
 * LangChain messages, placed by spliceHistory of the client with LangChain's
 * message ids: right before the host's message whose id is the turn's
 * assistantMessageId (the run's final answer), left out when the host no
 * longer has it; a turn without one (a failed or running run) right after
 * its afterMessageId message, else after the last message. `messages` is not
 * modified.
 */
export function spliceToolHistory(messages: readonly BaseMessage[], history: ReplayedTurns): BaseMessage[] {
  const turns = history.turns.map((turn) => ({
    assistantMessageId: turn.assistantMessageId,
    afterMessageId: turn.afterMessageId,
    messages: roundsToMessages(turn.rounds),
  }));
  return spliceHistory(messages, turns, (message) => message.id);
}

function roundsToMessages(rounds: readonly Round[]): BaseMessage[] {
  return rounds.flatMap((round) => [
    new AIMessage({
      // The round's text and, for the provider that recorded it, its reasoning where its integration sends it back from.
      ...reasoningMessageFields(round),
      tool_calls: round.calls.map((call) => ({
        type: 'tool_call' as const,
        id: call.toolCallId,
        name: call.toolName,
        args: parseArguments(call.argumentsJson, call.toolCallId),
      })),
    }),
    ...round.calls.map(
      (call) =>
        new ToolMessage({
          content: call.result,
          tool_call_id: call.toolCallId,
          name: call.toolName,
          status: call.isError ? 'error' : 'success',
        }),
    ),
  ]);
}

function openAiToMessages(messages: ReadonlyArray<OpenAiAssistantToolCallMessage | OpenAiToolMessage>): BaseMessage[] {
  const names = new Map<string, string>();
  return messages.map((message) => {
    if (message.role === 'assistant') {
      const toolCalls = message.tool_calls.map((call) => {
        names.set(call.id, call.function.name);
        return {
          type: 'tool_call' as const,
          id: call.id,
          name: call.function.name,
          args: parseArguments(call.function.arguments, call.id),
        };
      });
      return new AIMessage({ content: message.content ?? '', tool_calls: toolCalls });
    }
    if (message.role === 'tool') {
      return new ToolMessage({ content: message.content, tool_call_id: message.tool_call_id, name: names.get(message.tool_call_id) });
    }
    throw new TypeError(`toLangChainMessages: unexpected message role ${JSON.stringify((message as { role?: unknown }).role)}`);
  });
}

function parseArguments(json: string, toolCallId: string): JsonObject {
  let parsed: unknown;
  try {
    parsed = JSON.parse(json || '{}');
  } catch (error) {
    throw new TypeError(`toLangChainMessages: the arguments of tool call ${JSON.stringify(toolCallId)} are not JSON`, { cause: error });
  }
  return parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed)
    ? (parsed as JsonObject)
    : { input: parsed as JsonObject[string] };
}

function isReplayedTurns(history: LangChainHistoryInput): history is ReplayedTurns {
  return !Array.isArray(history) && typeof history === 'object' && history !== null && Array.isArray((history as ReplayedTurns).turns);
}
