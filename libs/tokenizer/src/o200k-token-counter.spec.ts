import fc from 'fast-check';
import { Tiktoken } from 'js-tiktoken/lite';
import { o200kTokens } from './o200k-token-counter';

// js-tiktoken, the JavaScript port of OpenAI's tiktoken, as the reference.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const reference = new Tiktoken(require('js-tiktoken/ranks/o200k_base'));
const referenceCount = (text: string) => reference.encode(text, [], []).length;

describe('o200kTokens (o200k_base)', () => {
  it('counts as the o200k_base encoding does', () => {
    expect(o200kTokens('')).toBe(0);
    expect(o200kTokens('hello world')).toBe(2);
    expect(o200kTokens('{"orderId":"A-1"}')).toBe(8);
    expect(o200kTokens('Grüße, 東京 🚀')).toBe(7);
  });

  it("counts a special token's spelling in a tool's output as plain text, never refusing it", () => {
    expect(o200kTokens('<|endoftext|>')).toBe(7);
    expect(o200kTokens('a <|endoftext|> b <|fim_prefix|>')).toBe(15);
  });

  it('agrees with the reference implementation on any text and any JSON', () => {
    fc.assert(
      fc.property(fc.oneof(fc.string({ unit: 'grapheme' }), fc.string({ unit: 'binary' }), fc.json()), (text) => {
        expect(o200kTokens(text)).toBe(referenceCount(text));
      }),
      { numRuns: 500 },
    );
  });
});
