// A plain file of the contract with no imports of its own: bundled into the package when it is built.
import { HISTORY_FORMAT_LIST, HISTORY_FORMATS, type HistoryFormat as ServiceHistoryFormat } from '../../contract/src/history-formats';
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
  ProviderMessagesByFormat,
} from '../../domain/src/replay/provider-messages';
import { type Round, HistoryFormat as WireHistoryFormat } from './generated/toolhistory/v1/toolhistory';
import { type AiSdkProviderOptions, type AiSdkReasoningPart, aiSdkCallOptions, aiSdkReasoningParts } from './ai-sdk-reasoning';
import type { JsonObject, JsonValue } from './tool-event-types';

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

/**
 * The Vercel AI SDK's assistant message of a round (a `ModelMessage`): the
 * round's reasoning as the SDK's `reasoning` parts (with the provider's
 * `providerOptions`), its text, then its tool calls (with what the provider
 * put on each: Gemini's signature, OpenAI's item id).
 */
export interface AiSdkAssistantMessage {
  role: 'assistant';
  content: Array<
    | AiSdkReasoningPart
    | { type: 'text'; text: string }
    | { type: 'tool-call'; toolCallId: string; toolName: string; input: JsonValue; providerOptions?: AiSdkProviderOptions }
  >;
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

/**
 * The history formats, by the API whose messages they are: every format
 * the service replays (the contract's HISTORY_FORMATS, by their client
 * names: `openai`, `anthropic`, `openai-responses`, `gemini`,
 * `bedrock-converse`), and `ai-sdk`, the AI SDK's `ModelMessage`s
 * (`tool-call` parts, then `tool-result` parts) built here from the rounds.
 */
export type HistoryMessages = {
  [F in ServiceHistoryFormat as (typeof HISTORY_FORMATS)[F]['client']]: ProviderMessagesByFormat[F];
} & { 'ai-sdk': AiSdkAssistantMessage | AiSdkToolMessage };
export type HistoryFormatName = keyof HistoryMessages;

/** How the client asks for a format and reads a turn of it. */
export interface ClientHistoryFormat {
  /** The format the request names. */
  wire: WireHistoryFormat;
  /**
   * Made here from a turn's structured rounds (the response's messages are
   * not read), for the provider the request named; else parsed from its
   * `messagesJson`.
   */
  fromRounds?: (rounds: readonly Round[], provider: string | undefined) => unknown[];
}

const serviceFormat = (format: ServiceHistoryFormat): [HistoryFormatName, ClientHistoryFormat] => [
  HISTORY_FORMATS[format].client,
  { wire: WireHistoryFormat[HISTORY_FORMATS[format].proto] },
];

/**
 * Each format the client asks for: the service's, and ai-sdk (built from the
 * OpenAI rounds), listed third as the client always has (its error messages
 * name them in this order).
 */
export const CLIENT_HISTORY_FORMATS: Readonly<Record<HistoryFormatName, ClientHistoryFormat>> = Object.fromEntries([
  ...HISTORY_FORMAT_LIST.slice(0, 2).map(serviceFormat),
  ['ai-sdk', { wire: WireHistoryFormat.HISTORY_FORMAT_OPENAI_CHAT, fromRounds: toAiSdkMessages }],
  ...HISTORY_FORMAT_LIST.slice(2).map(serviceFormat),
]) as Record<HistoryFormatName, ClientHistoryFormat>;

export const HISTORY_FORMAT_NAMES: readonly HistoryFormatName[] = Object.keys(CLIENT_HISTORY_FORMATS) as HistoryFormatName[];

/**
 * The AI SDK's messages for one turn's replayed rounds: per round one
 * assistant message (its reasoning parts and text, when replayed, then its
 * tool calls), then one tool message of their results, in the order of the
 * calls. A result is the text the model saw; an error result is
 * `error-text`. Reasoning comes only when the request named the provider
 * (`provider`), and only for rounds recorded through it; its options go
 * under the key the provider package of `provider` reads, when it names one
 * (the model's `provider`, `google.vertex.chat` say).
 */
export function toAiSdkMessages(rounds: readonly Round[], provider?: string): Array<AiSdkAssistantMessage | AiSdkToolMessage> {
  return rounds.flatMap((round) => [
    {
      role: 'assistant' as const,
      content: [
        ...aiSdkResponseParts(round, provider),
        ...round.calls.map((call) => ({
          type: 'tool-call' as const,
          toolCallId: call.toolCallId,
          toolName: call.toolName,
          input: JSON.parse(call.argumentsJson) as JsonValue,
          ...aiSdkCallPartOptions(round, call.toolCallId, provider),
        })),
      ],
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

/**
 * What an AI SDK assistant message of a replayed round starts with: the
 * SDK's reasoning parts of the round's replayed reasoning, then the round's
 * text, for the provider package of `provider` (see toAiSdkMessages).
 */
export function aiSdkResponseParts(
  round: Pick<Round, 'provider' | 'reasoningJson' | 'text'>,
  provider?: string,
): Array<AiSdkReasoningPart | { type: 'text'; text: string }> {
  const items = !round.reasoningJson ? [] : (JSON.parse(round.reasoningJson) as JsonObject[]);
  return [...aiSdkReasoningParts(round.provider, items, provider), ...(round.text ? [{ type: 'text' as const, text: round.text }] : [])];
}

/** A replayed call's tool-call part options: what its provider put on it (a signature, an item id), if anything. */
export function aiSdkCallPartOptions(
  round: Pick<Round, 'provider' | 'callSignatures' | 'callItemIds'>,
  toolCallId: string,
  provider?: string,
): { providerOptions?: AiSdkProviderOptions } {
  const options = aiSdkCallOptions(
    round.provider,
    { signature: round.callSignatures?.[toolCallId], itemId: round.callItemIds?.[toolCallId] },
    provider,
  );
  return options === undefined ? {} : { providerOptions: options };
}
