import fc from 'fast-check';
import { FRAGMENT_DELIMITER, wholeRedactionMarkers } from './search-snippet';

const MARKER = /\[REDACTED:[^\]]{1,80}\]/g;

describe('search snippets never show part of a redaction marker', () => {
  const invocation = {
    arguments: { to: '[REDACTED:email]', card: '[REDACTED:payment_card]' },
    result: 'sent to [REDACTED:email] at 10:00',
  };

  it('completes a marker cut at the end of an excerpt, or at its start', () => {
    expect(wholeRedactionMarkers('get_user {"to": "[REDACTED:**email**', invocation)).toBe('get_user {"to": "[REDACTED:**email**]');
    expect(wholeRedactionMarkers('payment_card] sent to **customer**', invocation)).toBe('[REDACTED:payment_card] sent to **customer**');
    expect(wholeRedactionMarkers('REDACTED:email] at 10', invocation)).toBe('[REDACTED:email] at 10');
  });

  it('drops a partial marker that could be more than one', () => {
    expect(wholeRedactionMarkers(`sent **to** "[REDACTED${FRAGMENT_DELIMITER}at 10:00`, invocation)).toBe(
      `sent **to** "${FRAGMENT_DELIMITER}at 10:00`,
    );
  });

  it('leaves whole markers and ordinary brackets alone', () => {
    expect(wholeRedactionMarkers('**sent** to [REDACTED:email] at', invocation)).toBe('**sent** to [REDACTED:email] at');
    expect(wholeRedactionMarkers('items] and [1, 2', { arguments: {}, result: 'x' })).toBe('items] and [1, 2');
  });

  /** Words and markers as the stored text has them; an excerpt starts at a word and ends at a word, as ts_headline cuts. */
  const LABELS = ['email', 'phone', 'payment_card', 'iban', 'secret', 'jwt', '$.customer.email', 'persist'];
  const piece = fc.oneof(
    fc.constantFrom('order', 'shipped', 'customer', 'REDACTED', 'email', '42', 'card'),
    fc.constantFrom(...LABELS).map((label) => `[REDACTED:${label}]`),
  );
  const textAndCut = fc
    .tuple(fc.array(piece, { minLength: 1, maxLength: 12 }), fc.constantFrom(' ', '", "', ': '))
    .chain(([pieces, separator]) => {
      const text = pieces.join(separator);
      const words = [...text.matchAll(/[A-Za-z0-9_]+/g)].map((m) => [m.index!, m.index! + m[0].length] as const);
      return fc.tuple(fc.nat(words.length - 1), fc.nat(words.length - 1)).map(([a, b]) => {
        const [from, to] = [Math.min(a, b), Math.max(a, b)];
        return { text, excerpt: text.slice(words[from][0], words[to][1]) };
      });
    });

  it('for any excerpt of any text: every marker shown is whole and one the invocation holds', () => {
    fc.assert(
      fc.property(textAndCut, fc.boolean(), ({ text, excerpt }, highlight) => {
        const shown = highlight ? excerpt.replace(/\b(email|order)\b/g, '**$1**') : excerpt;
        const out = wholeRedactionMarkers(shown, { arguments: {}, result: text }).replace(/\*\*/g, '');
        const held = new Set(text.match(MARKER) ?? []);
        for (const marker of out.match(MARKER) ?? []) expect(held.has(marker)).toBe(true);
        const rest = out.replace(MARKER, ' ');
        // No piece of a marker outside whole ones: no "[REDACTED" head, and no "label]" tail.
        expect(rest).not.toMatch(/\[REDACTED/);
        for (const label of LABELS) expect(rest).not.toContain(`${label}]`);
      }),
    );
  });
});
