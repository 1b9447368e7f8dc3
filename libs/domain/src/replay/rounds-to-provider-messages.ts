/**
 * Each format's translator: replayed rounds as the provider's messages
 * (shapes in provider-messages.ts), and the text a format sends around a
 * result, counted with it. HISTORY_FORMAT_TRANSLATORS names them by format.
 */
import type { JsonObject, JsonValue } from '@toolhistory/contract';
import {
  type AnthropicAssistantMessage,
  type AnthropicThinkingBlock,
  type AnthropicToolResultMessage,
  type BedrockAssistantMessage,
  type BedrockReasoningBlock,
  type BedrockToolResultMessage,
  type FormattableCall,
  type FormattableRound,
  GEMINI_PLACEHOLDER_SIGNATURE,
  type GeminiModelContent,
  type GeminiUserContent,
  type OpenAiAssistantToolCallMessage,
  type OpenAiResponsesFunctionCall,
  type OpenAiResponsesFunctionCallOutput,
  type OpenAiResponsesOutputMessage,
  type OpenAiResponsesReasoningItem,
  type OpenAiToolMessage,
} from './provider-messages';
import { anthropicToolUseId, bedrockToolUseId } from './replayed-tool-call-id';

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
