import type { JsonObject, JsonValue } from '@toolhistory/contract';

/**
 * The tokens a text takes in the model's context. The tokenizer is an
 * adapter's (o200k_base in the service); the rules below only say what text
 * of an invocation is counted.
 */
export type TokenCounter = (text: string) => number;

/** How a JSON result reads as text wherever one is shown: strings as they are, anything else as JSON. */
export const resultText = (result: unknown): string => (typeof result === 'string' ? result : JSON.stringify(result));

/**
 * A call as a provider message carries it: the tool's name and its arguments
 * as JSON text. Message framing and call ids, which providers add in ways
 * they do not publish exactly, are not counted.
 */
export const callTokens = (tokens: TokenCounter, toolName: string, args: JsonObject): number =>
  tokens(toolName) + tokens(JSON.stringify(args));

/** A result as the tool message carries it. */
export const resultTokens = (tokens: TokenCounter, result: JsonValue | undefined): number => tokens(resultText(result ?? null));
