import fc from 'fast-check';
import { CALM_SECONDS, type GcLoad, GcLoadFollower, growthFlag, nextGcLoad, QUIET, startupGcFlags } from './garbage-collection';

const config = (busyPercent = 50, pretenuring = false) => ({
  pretenuring,
  busy: { callsPerSecond: 1_000, heapGrowingPercent: busyPercent },
});

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

describe('GcLoadFollower', () => {
  function follower(busyPercent = 50) {
    let calls = 0;
    let now = 0;
    const flags: string[] = [];
    const logged: string[] = [];
    const follow = new GcLoadFollower(
      config(busyPercent),
      () => calls,
      { info: ((_: unknown, message: string) => logged.push(message)) as never },
      (flag) => flags.push(flag),
      () => now,
    );
    const second = (callsInIt: number, ms = 1_000) => {
      calls += callsInIt;
      now += ms;
      follow.tick();
    };
    return { follow, second, flags, logged };
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
});
