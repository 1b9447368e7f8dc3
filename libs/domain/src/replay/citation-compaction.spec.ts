import type { JsonObject, JsonValue } from '@toolhistory/contract';

import { CitationRule, CompactedResult, compactCitedItems, sourceNumberOf } from './citation-compaction';
import { parseReplayPolicy } from './parse-replay-policy';
import { policyOf } from './replay-test-support.fixture';

function problemsOf(document: unknown): string[] {
  const parsed = parseReplayPolicy(document);
  return parsed.ok ? [] : parsed.problems;
}

const WEB_SEARCH = { tools: { web_search: { citations: { items: '$.results[*]', number: '$.sourceNumber' } } } };
const rule = (): CitationRule => policyOf(WEB_SEARCH).tools.web_search.citations!;

const sources = (...numbers: JsonValue[]): JsonObject[] =>
  numbers.map((n) => ({ sourceNumber: n, url: `https://example.com/${String(n)}` }));
const numbersOf = (result: unknown) => ((result as { results: Array<{ sourceNumber: unknown }> }).results ?? []).map((r) => r.sourceNumber);

describe('citation compaction (`citations`)', () => {
  describe('the policy rule', () => {
    it('reads a rule: the list is the path without its final [*], the number a path in each item', () => {
      const policy = policyOf({ tools: { s: { citations: { items: "$.data['hits'][0].docs[*]", number: '$.meta.n' } } } });
      expect(policy.tools.s.citations).toEqual({
        itemsPath: "$.data['hits'][0].docs[*]",
        list: [
          { kind: 'key', key: 'data' },
          { kind: 'key', key: 'hits' },
          { kind: 'index', index: 0 },
          { kind: 'key', key: 'docs' },
        ],
        numberPath: '$.meta.n',
        number: [
          { kind: 'key', key: 'meta' },
          { kind: 'key', key: 'n' },
        ],
      });
    });

    it.each<[string, unknown, string[]]>([
      [
        'a list path not ending with [*]',
        { items: '$.results', number: '$.n' },
        ['tools.web_search.citations.items: "$.results" must end with [*]'],
      ],
      [
        'a list path ending with .*',
        { items: '$.results.*', number: '$.n' },
        ['tools.web_search.citations.items: "$.results.*" must end with [*]'],
      ],
      [
        'a second wildcard',
        { items: '$.pages[*].results[*]', number: '$.n' },
        ['tools.web_search.citations.items: "$.pages[*].results[*]" must have one wildcard, the final [*]'],
      ],
      [
        'a list that is the whole result',
        { items: '$[*]', number: '$.n' },
        ['tools.web_search.citations.items: "$[*]" must name a list inside the result, such as "$.results[*]"'],
      ],
      [
        'a list path not starting with $',
        { items: 'results[*]', number: '$.n' },
        ['tools.web_search.citations.items: "results[*]" must start with $'],
      ],
      [
        'a wildcard in the number',
        { items: '$.results[*]', number: '$.ids[*]' },
        ['tools.web_search.citations.number: "$.ids[*]" must name one value (no wildcard)'],
      ],
      [
        'a number path that is no path',
        { items: '$.results[*]', number: 'sourceNumber' },
        ['tools.web_search.citations.number: "sourceNumber" must start with $'],
      ],
      [
        'missing paths',
        {},
        [
          'tools.web_search.citations.items: must be a path such as "$.results[*]"',
          'tools.web_search.citations.number: must be a path such as "$.sourceNumber"',
        ],
      ],
      [
        'an unknown key',
        { items: '$.results[*]', number: '$.n', renumber: true },
        ['tools.web_search.citations.renumber: unknown key (allowed here: items, number)'],
      ],
      [
        'a rule that is not an object',
        '$.results[*]',
        [
          'tools.web_search.citations: must be an object {"items": <path to the listed items, ending with [*]>, "number": <path in each item>}',
        ],
      ],
    ])('names %s by its key', (_d, citations, expected) => {
      expect(problemsOf({ tools: { web_search: { citations } } })).toEqual(expected);
    });

    it('is a tool rule: refused in defaults and channels', () => {
      const citations = { items: '$.results[*]', number: '$.n' };
      expect(problemsOf({ defaults: { citations }, channels: { web: { citations } } })).toEqual([
        expect.stringMatching(/^defaults\.citations: unknown key/),
        expect.stringMatching(/^channels\.web\.citations: unknown key/),
      ]);
    });
  });

  describe('the rule on one result', () => {
    it.each<[string, JsonValue, number[], unknown[], number]>([
      ['keeps the cited items in their order, with their numbers', { results: sources(1, 2, 3, 4, 5) }, [4, 2], [2, 4], 3],
      ['keeps nothing when nothing is cited', { results: sources(1, 2, 3) }, [], [], 3],
      ['keeps all when all are cited', { results: sources(1, 2) }, [1, 2, 9], [1, 2], 0],
      ['never renumbers, whatever the order of the list', { results: sources(7, 3, 5) }, [5, 7], [7, 5], 1],
      ['reads a number written as digits', { results: sources('1', '2', '3') }, [2], ['2'], 2],
      ['keeps an item without a number', { results: [{ url: 'x' }, ...sources(1, 2)] }, [2], [undefined, 2], 1],
      [
        'keeps an item whose number is not a whole number',
        { results: sources(1.5, -1, 'two', null, true, 2) },
        [],
        [1.5, -1, 'two', null, true],
        1,
      ],
      ['keeps items that are not objects', { results: ['plain', 3, ...sources(1)] }, [], [undefined, undefined], 1],
      ['reads repeated numbers as the same source', { results: sources(1, 1, 2) }, [1], [1, 1], 1],
    ])('%s', (_d, result, cited, keptNumbers, compactedItems) => {
      const compacted = compactCitedItems(result, rule(), new Set(cited));
      expect(numbersOf(compacted.result)).toEqual(keptNumbers);
      expect(compacted.compactedItems).toBe(compactedItems);
    });

    it('leaves everything but the list as it was, and the recorded result unmodified', () => {
      const result: JsonObject = { query: 'q', results: sources(1, 2), page: { next: 'p2' } };
      Object.defineProperty(result, '__proto__', { value: 'own', enumerable: true, writable: true, configurable: true });
      const before = JSON.stringify(result);
      const compacted = compactCitedItems(result, rule(), new Set([2]));
      expect(JSON.stringify(compacted.result)).toBe(
        '{"query":"q","results":[{"sourceNumber":2,"url":"https://example.com/2"}],"page":{"next":"p2"},"__proto__":"own"}',
      );
      expect(JSON.stringify(result)).toBe(before);
    });

    it.each<[string, JsonValue]>([
      ['a text result', 'source 1: ...'],
      ['a list result', sources(1, 2) as JsonValue],
      ['a result without the list', { answer: 42 }],
      ['a result whose list is not a list', { results: { sourceNumber: 1 } }],
      ['null', null],
    ])('leaves %s as it is', (_d, result) => {
      expect(compactCitedItems(result, rule(), new Set())).toEqual({ result, compactedItems: 0 });
    });

    describe("a text result holding the JSON text of an object (as LangChain records a tool's object)", () => {
      const text = (value: unknown, space?: number) => JSON.stringify(value, null, space);
      it.each<[string, string, number[], CompactedResult]>([
        [
          'is compacted as the object and written back as JSON text',
          text({ query: 'q', results: sources(1, 2, 3) }, 2),
          [2],
          { result: text({ query: 'q', results: sources(2) }), compactedItems: 2 },
        ],
        [
          'keeps the text as recorded when nothing is left out',
          text({ results: sources(1, 2) }, 2),
          [1, 2],
          { result: text({ results: sources(1, 2) }, 2), compactedItems: 0 },
        ],
        [
          'leaves text holding an integer past 2^53 as it is',
          `{"results":[{"sourceNumber":1,"id":9007199254740993},{"sourceNumber":2}]}`,
          [2],
          { result: `{"results":[{"sourceNumber":1,"id":9007199254740993},{"sourceNumber":2}]}`, compactedItems: 0 },
        ],
        [
          'leaves text holding a number past the largest double as it is',
          `{"results":[{"sourceNumber":1,"score":1e400},{"sourceNumber":2}]}`,
          [2],
          { result: `{"results":[{"sourceNumber":1,"score":1e400},{"sourceNumber":2}]}`, compactedItems: 0 },
        ],
        ['leaves the JSON text of a list as it is', text(sources(1, 2)), [2], { result: text(sources(1, 2)), compactedItems: 0 }],
        ['leaves text that is not JSON as it is', '{results: [1, 2]}', [], { result: '{results: [1, 2]}', compactedItems: 0 }],
      ])('%s', (_d, result, cited, expected) => {
        expect(compactCitedItems(result, rule(), new Set(cited))).toEqual(expected);
      });
    });

    it('reaches a list through indices and quoted keys', () => {
      const nested = policyOf({ tools: { s: { citations: { items: "$.data['hits'][1].docs[*]", number: '$.meta.n' } } } }).tools.s
        .citations!;
      const result = { data: { hits: [{ docs: [] }, { docs: [{ meta: { n: 1 } }, { meta: { n: 2 } }] }] } };
      expect(compactCitedItems(result, nested, new Set([2]))).toEqual({
        result: { data: { hits: [{ docs: [] }, { docs: [{ meta: { n: 2 } }] }] } },
        compactedItems: 1,
      });
      expect(sourceNumberOf({ meta: { n: '0012' } }, nested)).toBe(12);
    });
  });
});
