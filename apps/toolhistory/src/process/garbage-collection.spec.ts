import fc from 'fast-check';
import {
  CALM_SECONDS,
  fullCollectionDue,
  type GcLoad,
  GcLoadFollower,
  growthFlag,
  nextGcLoad,
  QUIET,
  startupGcFlags,
  type V8Collector,
  processV8Collector,
} from './garbage-collection';

const config = (busyPercent = 50, pretenuring = false, callsPerFullCollection = 0) => ({
  pretenuring,
  busy: { callsPerSecond: 1_000, heapGrowingPercent: busyPercent },
  callsPerFullCollection,
});

/** V8 as the follower sees it: the flags set, the collections started, and a full collection made on demand. */
function fakeCollector() {
  const flags: string[] = [];
  let started = 0;
  let listener: ((collection: { byExternalMemory: boolean }) => void) | undefined;
  const collector: V8Collector = {
    setFlags: (flag) => flags.push(flag),
    startFullCollection: () => (started += 1),
    onFullCollection: (l) => {
      listener = l;
      return () => (listener = undefined);
    },
  };
  return {
    collector,
    flags,
    started: () => started,
    collect: () => listener?.({ byExternalMemory: false }),
    listening: () => listener !== undefined,
  };
}

describe('startupGcFlags', () => {
  it.each([
    { pretenuring: false, flags: ['--no-allocation-site-pretenuring', '--heap-growing-percent=0'] },
    { pretenuring: true, flags: ['--allocation-site-pretenuring', '--heap-growing-percent=0'] },
  ])('pretenuring $pretenuring: $flags', ({ pretenuring, flags }) => {
    expect(startupGcFlags(config(50, pretenuring))).toEqual(flags);
  });
});

describe('nextGcLoad', () => {
  it.each<{ case: string; load: GcLoad; perSecond: number; next: GcLoad }>([
    { case: 'quiet, below the rate', load: QUIET, perSecond: 999, next: QUIET },
    { case: 'quiet, at the rate', load: QUIET, perSecond: 1_000, next: { busy: true, calmSeconds: 0 } },
    { case: 'busy, a calm second', load: { busy: true, calmSeconds: 0 }, perSecond: 10, next: { busy: true, calmSeconds: 1 } },
    {
      case: 'busy, calm again after calm seconds',
      load: { busy: true, calmSeconds: 3 },
      perSecond: 5_000,
      next: { busy: true, calmSeconds: 0 },
    },
    { case: 'busy, the last calm second', load: { busy: true, calmSeconds: CALM_SECONDS - 1 }, perSecond: 0, next: QUIET },
  ])('$case', ({ load, perSecond, next }) => {
    expect(nextGcLoad(load, perSecond, 1_000)).toEqual(next);
  });

  it('over any trace: busy exactly when a second reached the rate within the last CALM_SECONDS', () => {
    // Runs of seconds at one rate, some longer than CALM_SECONDS, so that the load turns both ways.
    const runs = fc.array(fc.record({ rate: fc.nat({ max: 3_000 }), seconds: fc.integer({ min: 1, max: CALM_SECONDS + 50 }) }), {
      maxLength: 8,
    });
    fc.assert(
      fc.property(runs, fc.integer({ min: 1, max: 2_000 }), (runsOfRates, busyRate) => {
        const rates = runsOfRates.flatMap(({ rate, seconds }) => Array<number>(seconds).fill(rate));
        let load = QUIET;
        rates.forEach((rate, i) => {
          load = nextGcLoad(load, rate, busyRate);
          const recent = rates.slice(Math.max(0, i - CALM_SECONDS + 1), i + 1);
          expect(load.busy).toBe(recent.some((r) => r >= busyRate));
        });
      }),
    );
  });
});

describe('fullCollectionDue', () => {
  it.each([
    { callsSince: 19_999, bound: 20_000, due: false },
    { callsSince: 20_000, bound: 20_000, due: true },
    { callsSince: 50_000, bound: 20_000, due: true },
    { callsSince: 1_000_000, bound: 0, due: false },
    { callsSince: 0, bound: 1, due: false },
  ])('$callsSince calls since, bound $bound: $due', ({ callsSince, bound, due }) => {
    expect(fullCollectionDue(callsSince, bound)).toBe(due);
  });
});

describe('GcLoadFollower', () => {
  function follower(busyPercent = 50, callsPerFullCollection = 0) {
    let calls = 0;
    let now = 0;
    const v8 = fakeCollector();
    const logged: string[] = [];
    let counted = 0;
    const follow = new GcLoadFollower(
      config(busyPercent, false, callsPerFullCollection),
      () => calls,
      { info: ((_: unknown, message: string) => logged.push(message)) as never, warn: () => undefined },
      { collector: v8.collector, now: () => now, onCollectionStarted: () => (counted += 1) },
    );
    const second = (callsInIt: number, ms = 1_000) => {
      calls += callsInIt;
      now += ms;
      follow.tick();
    };
    const check = (callsSince: number) => {
      calls += callsSince;
      follow.checkCollection();
    };
    return { follow, second, check, flags: v8.flags, logged, v8, counted: () => counted };
  }

  it('sets the busy growth once busy, and V8 own growth once calm for CALM_SECONDS', () => {
    const { follow, second, flags, logged } = follower();
    follow.start();
    second(500);
    expect(flags).toEqual([]);
    second(2_000);
    second(3_000);
    expect(flags).toEqual([growthFlag(50)]);
    for (let s = 0; s < CALM_SECONDS - 1; s += 1) second(10);
    expect(flags).toEqual([growthFlag(50)]);
    second(10);
    expect(flags).toEqual([growthFlag(50), growthFlag(0)]);
    expect(logged).toEqual(['busy: shorter full collections', "calm: V8's own heap growth"]);
    follow.stop();
  });

  it('measures the rate over the time that passed, not per tick', () => {
    const { follow, second, flags } = follower();
    follow.start();
    second(1_500, 2_000); // a late tick: 750 a second
    expect(flags).toEqual([]);
    follow.stop();
  });

  it('starts a full collection after the bound of calls without one, and counts again from a collection V8 made', () => {
    const { follow, check, v8, counted } = follower(50, 20_000);
    follow.start();
    check(19_999);
    expect(v8.started()).toBe(0);
    check(1);
    expect(v8.started()).toBe(1);
    check(15_000);
    v8.collect(); // V8's own, before the bound: the count starts again
    check(15_000);
    expect(v8.started()).toBe(1);
    check(5_000);
    expect(v8.started()).toBe(2);
    expect(counted()).toBe(2);
    follow.stop();
    expect(v8.listening()).toBe(false);
  });

  it('when V8 refuses the buffer, says so once and leaves the collections to V8', () => {
    let calls = 0;
    const v8 = fakeCollector();
    const warned: string[] = [];
    let attempts = 0;
    const follow = new GcLoadFollower(
      config(50, false, 1_000),
      () => calls,
      { info: () => undefined, warn: ((_: unknown, message: string) => warned.push(message)) as never },
      {
        collector: {
          ...v8.collector,
          startFullCollection: () => {
            attempts += 1;
            throw new RangeError('Array buffer allocation failed');
          },
        },
      },
    );
    follow.start();
    calls += 1_000;
    expect(() => follow.checkCollection()).not.toThrow();
    calls += 5_000;
    follow.checkCollection();
    expect(attempts).toBe(1);
    expect(warned).toEqual(['could not start a full collection; V8 alone decides from now on']);
    follow.stop();
  });

  it('with the bound at 0, neither listens to V8 nor starts a collection', () => {
    const { follow, check, v8 } = follower(50, 0);
    follow.start();
    expect(v8.listening()).toBe(false);
    check(10_000_000);
    expect(v8.started()).toBe(0);
    follow.stop();
  });

  it('over any trace of calls and collections: a collection is started exactly when the bound is reached, and fewer calls wait after each check', () => {
    const step = fc.oneof(fc.record({ calls: fc.nat({ max: 30_000 }) }), fc.constant({ collect: true as const }));
    fc.assert(
      fc.property(fc.array(step, { maxLength: 60 }), fc.integer({ min: 1, max: 40_000 }), (steps, bound) => {
        const { follow, check, v8 } = follower(50, bound);
        follow.start();
        let sinceCollection = 0;
        for (const s of steps) {
          if ('collect' in s) {
            v8.collect();
            sinceCollection = 0;
            continue;
          }
          const before = v8.started();
          check(s.calls);
          sinceCollection += s.calls;
          const started = v8.started() - before;
          // Started exactly when the bound was reached; the calls left waiting never exceed it.
          expect(started).toBe(sinceCollection >= bound ? 1 : 0);
          if (started === 1) sinceCollection = 0;
          expect(sinceCollection).toBeLessThan(bound);
        }
        follow.stop();
      }),
    );
  });
});

describe('processV8Collector', () => {
  it('has V8 make a full collection, started by external memory, when it starts one', async () => {
    const v8 = processV8Collector();
    const collections: Array<{ byExternalMemory: boolean }> = [];
    const stop = v8.onFullCollection((c) => collections.push(c));
    try {
      v8.startFullCollection();
      for (let waited = 0; waited < 5_000 && !collections.some((c) => c.byExternalMemory); waited += 10)
        await new Promise((resolve) => setTimeout(resolve, 10));
      expect(collections).toContainEqual({ byExternalMemory: true });
    } finally {
      stop();
    }
  });
});
