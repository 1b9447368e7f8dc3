import fc from 'fast-check';
import { citedSourcesFrom } from './cited-sources';

describe('citedSourcesFrom', () => {
  it.each<[string, string, number[]]>([
    ['one citation', 'Paris is the capital [source2].', [2]],
    ['citations side by side, repeated, out of order', 'Yes [source3][source1] and again [source3].', [1, 3]],
    ['source 0 and leading zeros', '[source0] [source007]', [0, 7]],
    ['no citation', 'Nothing cited here.', []],
    ['other spellings, not read', '[Source1] [source 2] [source-3] [sources4] source5 [source6', []],
    ['a number beyond what an event carries', '[source2147483648] [source2147483647]', [2147483647]],
    ['citations inside other text', 'see([source12]),[source4]!', [4, 12]],
  ])('reads %s', (_d, text, expected) => {
    expect(citedSourcesFrom(text)).toEqual(expected);
  });

  it('finds every number written as [sourceN], whatever is around it, sorted and once each', () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.string({ maxLength: 8 }), fc.integer({ min: 0, max: 100_000 })), { maxLength: 12 }),
        fc.string({ maxLength: 8 }),
        (parts, tail) => {
          // Text between citations holds no citation of its own ("[" is dropped from it).
          const clean = (s: string) => s.replace(/\[/g, '');
          const text = parts.map(([before, n]) => `${clean(before)}[source${n}]`).join('') + clean(tail);
          expect(citedSourcesFrom(text)).toEqual([...new Set(parts.map(([, n]) => n))].sort((a, b) => a - b));
        },
      ),
    );
  });
});
