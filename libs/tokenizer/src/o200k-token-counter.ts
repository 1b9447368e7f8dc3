import { Tiktoken, type TiktokenBPE } from 'js-tiktoken/lite';
import type { TokenCounter } from '@toolhistory/domain';

let encoder: Tiktoken | undefined;

/**
 * The rank table (2.3 MB) is loaded on the first count, not at import: a
 * process that never records or replays does not pay for it.
 */
function o200k(): Tiktoken {
  if (!encoder) {
    // A subpath export, which this project's `node` module resolution does not resolve for types.
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const ranks = require('js-tiktoken/ranks/o200k_base') as TiktokenBPE;
    encoder = new Tiktoken(ranks);
  }
  return encoder;
}

/**
 * Tokens under o200k_base, the encoding of OpenAI's current models (a close
 * estimate for other providers, whose tokenizers are not published). Text
 * that spells a special token (`<|endoftext|>`) in a tool's output is
 * counted as the plain text it is, never refused.
 */
export const o200kTokens: TokenCounter = (text) => o200k().encode(text, [], []).length;
