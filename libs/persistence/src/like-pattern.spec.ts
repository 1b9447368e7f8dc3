import fc from 'fast-check';
import { containsPattern } from './like-pattern';

/** LIKE as PostgreSQL reads a pattern with the default escape `\`, for texts without line breaks. */
function like(text: string, pattern: string): boolean {
  let source = '';
  for (let i = 0; i < pattern.length; i += 1) {
    const c = pattern[i];
    if (c === '\\') source += (pattern[++i] ?? '').replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
    else if (c === '%') source += '[\\s\\S]*';
    else if (c === '_') source += '[\\s\\S]';
    else source += c.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
  }
  return new RegExp(`^${source}$`).test(text);
}

describe('containsPattern: a literal text as a LIKE pattern', () => {
  it.each([
    ['kett', '%kett%'],
    ['50%', '%50\\%%'],
    ['a_b', '%a\\_b%'],
    ['C:\\dir', '%C:\\\\dir%'],
    ['\\%_', '%\\\\\\%\\_%'],
    ['plain text', '%plain text%'],
  ])('%j becomes %j', (literal, pattern) => {
    expect(containsPattern(literal)).toBe(pattern);
  });

  it('matches a text exactly when the text contains the literal', () => {
    const chars = fc.constantFrom('a', 'b', '%', '_', '\\', ' ');
    const text = fc.array(chars, { maxLength: 12 }).map((c) => c.join(''));
    fc.assert(
      fc.property(text, text, (haystack, literal) => {
        expect(like(haystack, containsPattern(literal))).toBe(haystack.includes(literal));
      }),
    );
  });
});
