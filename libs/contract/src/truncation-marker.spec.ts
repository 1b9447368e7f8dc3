import fc from 'fast-check';
import { TRUNCATION_TAIL, truncationMarker } from './truncation-marker';

describe('truncationMarker', () => {
  it.each([
    [0, '…[truncated 0 chars]'],
    [7, '…[truncated 7 chars]'],
    [4_900, '…[truncated 4,900 chars]'],
    [2_000_000, '…[truncated 2,000,000 chars]'],
  ])('marks %i removed characters as %s', (removed, marker) => {
    expect(truncationMarker(removed)).toBe(marker);
  });

  it('is what TRUNCATION_TAIL finds at the end of a cut text', () => {
    fc.assert(
      fc.property(fc.string(), fc.nat(), (kept, removed) => {
        const match = TRUNCATION_TAIL.exec(kept + truncationMarker(removed));
        expect(match?.[0]).toBe(truncationMarker(removed));
      }),
    );
  });
});
