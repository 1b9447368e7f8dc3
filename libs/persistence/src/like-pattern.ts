/**
 * A LIKE pattern matching any text that contains `literal`: `%` and `_`
 * (any text, any one character) and `\`, LIKE's escape character, are
 * escaped, so every character of the literal stands for itself.
 */
export function containsPattern(literal: string): string {
  return `%${literal.replace(/[\\%_]/g, '\\$&')}%`;
}
