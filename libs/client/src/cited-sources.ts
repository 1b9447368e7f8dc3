/** The largest source number an event carries (the contract's index bound). */
const MAX_SOURCE_NUMBER = 2_147_483_647;

/** `[sourceN]` exactly as the answer writes it: lower case, no space, decimal digits. */
const CITATION = /\[source(\d+)\]/g;

/**
 * The source numbers an answer cites, for RunCompleted's `citedSources`:
 * every `[sourceN]` in the text (also when several follow each other, as
 * in `[source1][source2]`), sorted, once each. Other spellings
 * (`[Source 1]`, `[source-1]`) are not read: a number misread would drop a
 * source the answer needs; a number missed only keeps one it does not.
 */
export function citedSourcesFrom(answerText: string): number[] {
  const numbers = new Set<number>();
  for (const [, digits] of answerText.matchAll(CITATION)) {
    const n = Number(digits);
    if (n <= MAX_SOURCE_NUMBER) numbers.add(n);
  }
  return [...numbers].sort((a, b) => a - b);
}
