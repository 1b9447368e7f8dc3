import type { HistoryFormat } from '@toolhistory/contract';
import type { FormattableCall, FormattableRound, ProviderMessage, ProviderMessagesByFormat } from './provider-messages';
import { anthropicToolUseId, bedrockToolUseId } from './replayed-tool-call-id';
import {
  geminiResultWrapping,
  responsesResultWrapping,
  toAnthropicMessages,
  toBedrockConverseMessages,
  toGeminiContents,
  toOpenAiChatMessages,
  toOpenAiResponsesItems,
} from './rounds-to-provider-messages';

/** How replay gives a history in one format. */
export interface HistoryFormatTranslator<M> {
  /** The rounds as the format's messages. */
  messagesOf(rounds: readonly FormattableRound[]): M[];
  /** A call's id as the format carries it (the recorded one, or the one derived for a call without). */
  toolCallIdOf(recordedOrDerived: string): string;
  /** The text the format sends around a result's own text, counted with the result's tokens ('' for none). */
  resultWrapping(call: FormattableCall): string;
  /** The provider whose API the format is the input of, whose reasoning it carries back (round-responses.ts); null: it carries none. */
  provider: string | null;
}

const asRecorded = (id: string): string => id;
const noWrapping = (): string => '';

/**
 * Each format's translator, by the format's name (the formats and their
 * other names are declared in the contract's HISTORY_FORMATS: a format
 * without a translator here does not compile).
 */
export const HISTORY_FORMAT_TRANSLATORS: { readonly [F in HistoryFormat]: HistoryFormatTranslator<ProviderMessagesByFormat[F]> } = {
  openai_chat: { messagesOf: toOpenAiChatMessages, toolCallIdOf: asRecorded, resultWrapping: noWrapping, provider: null },
  anthropic_messages: {
    messagesOf: toAnthropicMessages,
    toolCallIdOf: anthropicToolUseId,
    resultWrapping: noWrapping,
    provider: 'anthropic',
  },
  openai_responses: {
    messagesOf: toOpenAiResponsesItems,
    toolCallIdOf: asRecorded,
    resultWrapping: responsesResultWrapping,
    provider: 'openai',
  },
  gemini: { messagesOf: toGeminiContents, toolCallIdOf: asRecorded, resultWrapping: geminiResultWrapping, provider: 'google' },
  bedrock_converse: {
    messagesOf: toBedrockConverseMessages,
    toolCallIdOf: bedrockToolUseId,
    resultWrapping: noWrapping,
    provider: 'bedrock',
  },
};

/** The translator of `format`. */
export function translatorOf(format: HistoryFormat): HistoryFormatTranslator<ProviderMessage> {
  return HISTORY_FORMAT_TRANSLATORS[format] as HistoryFormatTranslator<ProviderMessage>;
}

/**
 * The text a format sends around a result's own text, counted with it
 * (replay-history.ts): Responses marks errors, Gemini wraps what is not a
 * JSON object. Escaping inside a wrapped string is not counted.
 */
export function resultWrapping(format: HistoryFormat, call: FormattableCall): string {
  return translatorOf(format).resultWrapping(call);
}
