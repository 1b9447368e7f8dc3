import fc from 'fast-check';
import { FRAGMENT_DELIMITER, substringSnippet, SUBSTRING_CONTEXT_CHARS, wholeRedactionMarkers } from './search-snippet';

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

describe('substring snippets', () => {
  it('wraps the first match of each matched text in ** **, with some context, on one line', () => {
    expect(substringSnippet(['boil_water'], 'WATER')).toBe('boil_**water**');
    expect(substringSnippet(['{"appliance": "kettle"}', 'the Kettle\nis on'], 'kett')).toBe(
      `{"appliance": "**kett**le"}${FRAGMENT_DELIMITER}the **Kett**le is on`,
    );
    const long = `${'a'.repeat(100)}needle${'b'.repeat(100)}`;
    expect(substringSnippet([long], 'needle')).toBe(
      `${'a'.repeat(SUBSTRING_CONTEXT_CHARS)}**needle**${'b'.repeat(SUBSTRING_CONTEXT_CHARS)}`,
    );
  });

  it('takes the query literally: no character of it is an operator', () => {
    for (const query of ['50%', 'a_b', 'C:\\dir', '(x)', '[1]', '$.path', 'a|b', '^start', '.*', '{}']) {
      expect(substringSnippet([`before ${query} after`], query)).toBe(`before **${query}** after`);
      expect(substringSnippet(['nothing like it'], query)).toBe('nothing like it');
    }
  });

  it('never splits a surrogate pair at the edge of its context', () => {
    const text = `${'😀'.repeat(30)}find${'😀'.repeat(30)}`;
    const snippet = substringSnippet([text], 'find');
    expect(snippet).toBe(`${'😀'.repeat(20)}**find**${'😀'.repeat(20)}`);
  });

  it('holds for any text containing the query in any case: the marked text is the query, on one line, with context from the text', () => {
    // No '*' here, so the only ** are the snippet's own (the table above has queries with operators).
    const chars = fc.constantFrom('a', 'B', 'c', ' ', '\n', '%', '_', '\\', '.', '(', '😀', 'é');
    const oneLine = (text: string) => text.replace(/\s+/g, ' ');
    fc.assert(
      fc.property(
        fc.array(chars, { maxLength: 60 }).map((c) => c.join('')),
        fc.array(chars, { minLength: 3, maxLength: 8 }).map((c) => c.join('')),
        fc.array(chars, { maxLength: 60 }).map((c) => c.join('')),
        fc.boolean(),
        (before, query, after, upper) => {
          const text = `${before}${upper ? query.toUpperCase() : query}${after}`;
          const snippet = substringSnippet([text], query);
          expect(snippet).not.toMatch(/\n/);
          const parts = snippet.split('**');
          expect(parts).toHaveLength(3);
          expect(parts[1].toLowerCase()).toBe(oneLine(query).toLowerCase());
          expect(oneLine(text)).toContain(oneLine(parts.join('')));
          expect(Array.from(parts[0]).length + Array.from(parts[2]).length).toBeLessThanOrEqual(2 * SUBSTRING_CONTEXT_CHARS);
        },
      ),
    );
  });
});
