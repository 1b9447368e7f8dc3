import fc from 'fast-check';
import {
  DEFAULT_SEARCH_LIMIT,
  MAX_QUERY_CHARS,
  MIN_SUBSTRING_CHARS,
  MAX_SEARCH_LIMIT,
  searchLimitOf,
  searchQueryOf,
} from './search-request';

describe('search request rules', () => {
  const base = { tenantId: 'acme', query: 'git status' };

  it('requires tenant_id and query, naming each missing field', () => {
    expect(searchQueryOf({ ...base, tenantId: '' })).toEqual({ ok: false, error: 'tenant_id is required' });
    expect(searchQueryOf({ ...base, query: '' })).toEqual({ ok: false, error: 'query is required' });
    expect(searchQueryOf({ tenantId: '', query: '' })).toEqual({ ok: false, error: 'tenant_id and query are required' });
  });

  it('counts a query of only blanks or control characters as missing', () => {
    expect(searchQueryOf({ ...base, query: ' \t\n ' })).toEqual({ ok: false, error: 'query is required' });
    expect(searchQueryOf({ ...base, query: '\u0000\u0007' })).toEqual({ ok: false, error: 'query is required' });
  });

  it('trims the query and turns control characters (NUL included) into blanks', () => {
    const checked = searchQueryOf({ ...base, query: '  git\u0000status\r\n' });
    expect(checked).toMatchObject({ ok: true, value: { query: 'git status' } });
  });

  it('keeps search syntax as typed: quotes, or, exclusions and punctuation are the storage query language', () => {
    for (const query of ['"exact phrase" -noise', 'a or b', '!!!', 'src/app.ts', '(((']) {
      expect(searchQueryOf({ ...base, query })).toMatchObject({ ok: true, value: { query } });
    }
  });

  it('cuts a long query to its first 1,000 characters, never inside a surrogate pair', () => {
    const long = searchQueryOf({ ...base, query: 'word '.repeat(1_000) });
    expect(long.ok && long.value.query.length).toBeLessThanOrEqual(MAX_QUERY_CHARS);
    expect(long.ok && long.value.query.startsWith('word word')).toBe(true);
    const emoji = searchQueryOf({ ...base, query: '😀'.repeat(MAX_QUERY_CHARS + 5) });
    expect(emoji.ok && Array.from(emoji.value.query)).toEqual(Array(MAX_QUERY_CHARS).fill('😀'));
  });

  it('answers 20 hits by default and at most 100', () => {
    expect(searchLimitOf(undefined)).toEqual({ ok: true, value: DEFAULT_SEARCH_LIMIT });
    expect(searchLimitOf(0)).toEqual({ ok: true, value: 20 });
    expect(searchLimitOf(7)).toEqual({ ok: true, value: 7 });
    expect(searchLimitOf(100)).toEqual({ ok: true, value: 100 });
    expect(searchLimitOf(101)).toEqual({ ok: true, value: MAX_SEARCH_LIMIT });
    expect(searchLimitOf(-1)).toEqual({ ok: false, error: 'limit must be a whole number, 0 or more' });
    expect(searchLimitOf(2.5)).toEqual({ ok: false, error: 'limit must be a whole number, 0 or more' });
    expect(searchQueryOf({ ...base, limit: 5_000 })).toMatchObject({ ok: true, value: { limit: 100 } });
    expect(searchQueryOf({ ...base, limit: -3 })).toEqual({ ok: false, error: 'limit must be a whole number, 0 or more' });
  });

  it('takes an optional period whose from is before its to, as ISO-8601', () => {
    const from = Date.parse('2026-11-20T10:00:00Z');
    const to = Date.parse('2026-11-20T11:00:00.250Z');
    expect(searchQueryOf({ ...base, from, to })).toEqual({
      ok: true,
      value: {
        tenantId: 'acme',
        query: 'git status',
        match: 'words',
        conversationId: undefined,
        from: '2026-11-20T10:00:00.000Z',
        to: '2026-11-20T11:00:00.250Z',
        limit: 20,
      },
    });
    expect(searchQueryOf({ ...base, from })).toMatchObject({ ok: true, value: { from: '2026-11-20T10:00:00.000Z', to: undefined } });
    expect(searchQueryOf({ ...base, from: to, to: from })).toEqual({ ok: false, error: 'from must be before to' });
    expect(searchQueryOf({ ...base, from, to: from })).toEqual({ ok: false, error: 'from must be before to' });
    expect(searchQueryOf({ ...base, to: 1e20 })).toEqual({ ok: false, error: 'to is not a valid time' });
    expect(searchQueryOf({ ...base, to: Date.parse('+010000-01-01T00:00:00Z') })).toEqual({ ok: false, error: 'to is not a valid time' });
    expect(searchQueryOf({ ...base, from: Date.parse('0001-01-01T00:00:00Z'), to: Date.parse('9999-12-31T23:59:59.999Z') })).toMatchObject({
      ok: true,
      value: { from: '0001-01-01T00:00:00.000Z', to: '9999-12-31T23:59:59.999Z' },
    });
    expect(searchQueryOf({ ...base, from: Number.NaN })).toEqual({ ok: false, error: 'from is not a valid time' });
  });

  it('treats an empty conversation filter as none', () => {
    expect(searchQueryOf({ ...base, conversationId: '' })).toMatchObject({ ok: true, value: { conversationId: undefined } });
    expect(searchQueryOf({ ...base, conversationId: 'c-1' })).toMatchObject({ ok: true, value: { conversationId: 'c-1' } });
  });

  it('matches words unless asked for a substring, which must be at least 3 characters', () => {
    expect(searchQueryOf(base)).toMatchObject({ ok: true, value: { match: 'words' } });
    const cases: [string, boolean][] = [
      ['kett', true],
      ['50%', true],
      ['a_b', true],
      ['ab', false],
      ['  ab  ', false],
      ['😀😀', false],
      ['😀😀😀', true],
    ];
    for (const [query, valid] of cases) {
      expect(searchQueryOf({ ...base, query, match: 'substring' })).toEqual(
        valid
          ? expect.objectContaining({ ok: true, value: expect.objectContaining({ query: query.trim(), match: 'substring' }) })
          : { ok: false, error: 'query must be at least 3 characters to match as a substring' },
      );
    }
    // Two characters are a fine word to look for.
    expect(searchQueryOf({ ...base, query: 'ab', match: 'words' })).toMatchObject({ ok: true });
  });

  it('accepts a substring query exactly when it has at least 3 characters once trimmed', () => {
    fc.assert(
      fc.property(fc.string({ unit: fc.constantFrom('a', ' ', '%', '😀'), maxLength: 8 }), (query) => {
        const checked = searchQueryOf({ ...base, query, match: 'substring' });
        expect(checked.ok).toBe(Array.from(query.trim()).length >= MIN_SUBSTRING_CHARS);
      }),
    );
  });
});
