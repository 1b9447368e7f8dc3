import type { CheckpointedProjection, EventStore, RecordedToolEvent } from '@toolhistory/domain';
import { toolCall } from '../../../../test/support/tool-event-factory';
import fc from 'fast-check';
import { HOLD_CHECK_MS, holdMs, ReadModelProjector } from './read-model-projector';

const APPLY_MS = 60;
const scope = { tenantId: 't', conversationId: 'c', runId: 'r' };
const recorded = (n: number): RecordedToolEvent => ({
  globalPosition: String(n),
  streamPosition: n,
  recordedAt: new Date().toISOString(),
  event: toolCall(scope, { roundIndex: n, sequenceIndex: 0 }),
});

/** A store that hands out two batches far enough apart that the projector applies them separately. */
function twoBatches(): EventStore {
  return {
    async *subscribe(_after, options) {
      yield recorded(1);
      await new Promise((r) => setTimeout(r, 50));
      if (!options?.signal?.aborted) yield recorded(2);
      await new Promise<void>((r) => options?.signal?.addEventListener('abort', () => r(), { once: true }));
    },
  } as Pick<EventStore, 'subscribe'> as EventStore;
}

/** A projection whose apply takes APPLY_MS and notes when each started and ended. */
function slowProjection(applied: Array<{ started: number; ended: number }>): CheckpointedProjection {
  return {
    checkpoint: async () => '0',
    apply: async () => {
      const started = Date.now();
      await new Promise((r) => setTimeout(r, APPLY_MS));
      applied.push({ started, ended: Date.now() });
    },
    skip: async () => undefined,
  };
}

async function appliedTwice(giveWay: boolean) {
  const applied: Array<{ started: number; ended: number }> = [];
  const asked: boolean[] = [];
  const projector = new ReadModelProjector(twoBatches(), slowProjection(applied), {
    lingerMs: 0,
    giveWayWhile: () => (asked.push(giveWay), giveWay),
  });
  projector.start();
  while (applied.length < 2) await new Promise((r) => setTimeout(r, 5));
  await projector.stop();
  return { applied, asked };
}

describe('ReadModelProjector giving way to recording', () => {
  it('waits as long as its last batch took before the next one while recording is busy', async () => {
    const { applied, asked } = await appliedTwice(true);
    expect(asked).toEqual([true, true]);
    // A timer may fire a millisecond early; the wait is the last apply's whole duration.
    expect(applied[1].started - applied[0].ended).toBeGreaterThanOrEqual(APPLY_MS - 2);
  });

  it('asks before every batch and goes straight on while recording is quiet', async () => {
    const { asked } = await appliedTwice(false);
    expect(asked).toEqual([false, false]);
  });

  it('says it is applying while a batch is applied, and not before or after', async () => {
    const seen: boolean[] = [];
    const projection = slowProjection([]);
    const watched = {
      ...projection,
      apply: async (batch: readonly RecordedToolEvent[]): Promise<void> => (seen.push(projector.applying()), projection.apply(batch)),
    };
    const projector: ReadModelProjector = new ReadModelProjector(twoBatches(), watched, { lingerMs: 0 });
    expect(projector.applying()).toBe(false);
    projector.start();
    while (seen.length < 2) await new Promise((r) => setTimeout(r, 5));
    await projector.stop();
    expect(seen).toEqual([true, true]);
    expect(projector.applying()).toBe(false);
  });
});

describe('holdMs: how long a search batch waits while reads are refused', () => {
  const BOUND = 30_000;
  it.each([
    { case: 'reads not refused', now: 1_000, oldest: 1_000, refused: false, expected: 0 },
    { case: 'a fresh batch while refused: until the next look', now: 1_000, oldest: 1_000, refused: true, expected: HOLD_CHECK_MS },
    { case: 'near the bound: only up to it', now: 1_000 + BOUND - 100, oldest: 1_000, refused: true, expected: 100 },
    { case: 'at the bound: go on', now: 1_000 + BOUND, oldest: 1_000, refused: true, expected: 0 },
    { case: 'past the bound: go on', now: 1_000 + 2 * BOUND, oldest: 1_000, refused: true, expected: 0 },
    { case: 'recorded "after" now (clocks apart): until the next look', now: 1_000, oldest: 5_000, refused: true, expected: HOLD_CHECK_MS },
    { case: 'no readable time of recording: go on', now: 1_000, oldest: Number.NaN, refused: true, expected: 0 },
  ])('$case', ({ now, oldest, refused, expected }) => {
    expect(holdMs(now, oldest, BOUND, refused)).toBe(expected);
  });

  it('never holds past the bound, never longer than one look, and not at all unless reads are refused', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 1e12 }),
        fc.integer({ min: -1e6, max: 1e6 }),
        fc.integer({ min: 1, max: 1e6 }),
        fc.boolean(),
        (now, age, bound, refused) => {
          const wait = holdMs(now, now - age, bound, refused);
          expect(wait).toBeGreaterThanOrEqual(0);
          expect(wait).toBeLessThanOrEqual(HOLD_CHECK_MS);
          if (!refused || age >= bound) expect(wait).toBe(0);
          else expect(wait).toBe(Math.min(HOLD_CHECK_MS, bound - age));
        },
      ),
    );
  });
});

describe('ReadModelProjector holding while reads are refused', () => {
  async function firstApplied(options: { refused: () => boolean; holdAtMostMs: number; recordedAgoMs: number }) {
    const applied: Array<{ started: number; ended: number }> = [];
    const asked: number[] = [];
    const started = Date.now();
    const store = {
      async *subscribe(_after: unknown, subscribeOptions?: { signal?: AbortSignal }) {
        yield { ...recorded(1), recordedAt: new Date(started - options.recordedAgoMs).toISOString() };
        await new Promise<void>((r) => subscribeOptions?.signal?.addEventListener('abort', () => r(), { once: true }));
      },
    } as Pick<EventStore, 'subscribe'> as EventStore;
    const projector = new ReadModelProjector(store, slowProjection(applied), {
      lingerMs: 0,
      holdWhile: () => (asked.push(Date.now()), options.refused()),
      holdAtMostMs: options.holdAtMostMs,
    });
    projector.start();
    while (applied.length < 1) await new Promise((r) => setTimeout(r, 5));
    await projector.stop();
    return { waitedMs: applied[0].started - started, asked: asked.length };
  }

  it('holds a batch until its oldest event is as old as the bound while reads stay refused', async () => {
    const { waitedMs, asked } = await firstApplied({ refused: () => true, holdAtMostMs: 600, recordedAgoMs: 0 });
    // A timer may fire a millisecond early; the batch goes once it is 600 ms old, looking every HOLD_CHECK_MS.
    expect(waitedMs).toBeGreaterThanOrEqual(600 - 2);
    expect(asked).toBeGreaterThanOrEqual(3);
  });

  it('goes on as soon as reads are no longer refused', async () => {
    const refusedUntil = Date.now() + 300;
    const { waitedMs } = await firstApplied({ refused: () => Date.now() < refusedUntil, holdAtMostMs: 60_000, recordedAgoMs: 0 });
    expect(waitedMs).toBeGreaterThanOrEqual(300 - 2);
    expect(waitedMs).toBeLessThan(60_000);
  });

  it('holds a batch stamped later than now (another clock) no longer than the bound', async () => {
    const { waitedMs } = await firstApplied({ refused: () => true, holdAtMostMs: 300, recordedAgoMs: -3_600_000 });
    expect(waitedMs).toBeGreaterThanOrEqual(300 - 2);
    expect(waitedMs).toBeLessThan(3_600_000);
  });

  it('does not hold a batch already as old as the bound, nor any batch with a bound of 0', async () => {
    const old = await firstApplied({ refused: () => true, holdAtMostMs: 1_000, recordedAgoMs: 5_000 });
    expect(old.asked).toBe(1);
    const never = await firstApplied({ refused: () => true, holdAtMostMs: 0, recordedAgoMs: 0 });
    expect(never.asked).toBe(0);
  });
});
