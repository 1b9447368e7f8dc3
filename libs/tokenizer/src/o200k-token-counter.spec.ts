import { o200kTokens } from './o200k-token-counter';

describe('o200kTokens (o200k_base through js-tiktoken)', () => {
  it('counts as the o200k_base encoding does', () => {
    expect(o200kTokens('')).toBe(0);
    expect(o200kTokens('hello world')).toBe(2);
    expect(o200kTokens('{"orderId":"A-1"}')).toBe(8);
    expect(o200kTokens('Grüße, 東京 🚀')).toBe(7);
  });

  it("counts a special token's spelling in a tool's output as plain text, never refusing it", () => {
    expect(o200kTokens('<|endoftext|>')).toBe(7);
    expect(o200kTokens('before <|endoftext|> after')).toBeGreaterThan(7);
  });
});
