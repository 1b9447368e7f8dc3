import type { TokenCounter } from './invocation-tokens';

/** A stand-in tokenizer for rule tests: one token per four characters, rounded up (so "" is 0, "{}" is 1). */
export const testTokens: TokenCounter = (text) => Math.ceil(text.length / 4);
