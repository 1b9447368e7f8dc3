import { Tokenizer, type Encoding } from 'ai-tokenizer';
import type { TokenCounter } from '@toolhistory/domain';

let tokenizer: Tokenizer | undefined;

/** The rank table is loaded on the first count, not at import: a process that never counts does not pay for it. */
function o200k(): Tokenizer {
  if (!tokenizer) {
    // A subpath export, which this project's `node` module resolution does not resolve for types.
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    tokenizer = new Tokenizer(require('ai-tokenizer/encoding/o200k_base') as Encoding);
  }
  return tokenizer;
}

/**
 * Tokens under o200k_base, the encoding of OpenAI's current models (a close
 * estimate for other providers, whose tokenizers are not published), through
 * ai-tokenizer: the same counts as tiktoken, about ten times faster than
 * js-tiktoken on tool output (docs/adr/014-token-counting.md). Text that
 * spells a special token (`<|endoftext|>`) in a tool's output is counted as
 * the plain text it is, never refused.
 */
export const o200kTokens: TokenCounter = (text) => o200k().encode(text, [], []).length;
