import { inBatches } from './in-batches';

async function* items<T>(values: T[], gapMs = 0): AsyncGenerator<T> {
  for (const value of values) {
    if (gapMs > 0) await new Promise((resolve) => setTimeout(resolve, gapMs));
    yield value;
  }
}

async function collect<T>(source: AsyncIterable<T[]>): Promise<T[][]> {
  const out: T[][] = [];
  for await (const batch of source) out.push(batch);
  return out;
}

describe('inBatches', () => {
  it('fills batches up to the size while items are ready, keeping order and the last partial batch', async () => {
    expect(await collect(inBatches(items([1, 2, 3, 4, 5, 6, 7]), 3, 1_000))).toEqual([[1, 2, 3], [4, 5, 6], [7]]);
  });

  it('closes a batch when items stop coming for the linger time', async () => {
    const batches = await collect(inBatches(items([1, 2, 3, 4], 40), 10, 15));
    expect(batches.flat()).toEqual([1, 2, 3, 4]);
    expect(batches.length).toBeGreaterThan(1);
  });

  it('ends the source when the consumer stops early', async () => {
    let finished = false;
    async function* source() {
      try {
        for (let i = 0; ; i += 1) yield i;
      } finally {
        finished = true;
      }
    }
    for await (const batch of inBatches(source(), 5, 10)) {
      expect(batch).toEqual([0, 1, 2, 3, 4]);
      break;
    }
    expect(finished).toBe(true);
  });
});
