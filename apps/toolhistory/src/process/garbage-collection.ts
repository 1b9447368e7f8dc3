import { setFlagsFromString } from 'node:v8';
import type { GcConfig } from '@toolhistory/config';
import type { Logger } from 'pino';

/**
 * V8's garbage collector, set by the service's settings and by its load
 * (docs/adr/035-garbage-collection-under-load.md).
 *
 * Each gRPC call leaves objects that only a full collection frees: Node
 * makes every value of an HTTP/2 request's headers an external string,
 * which V8 places in the old generation. A full collection's pause grows
 * with the calls received since the last one, and in a flood V8's own
 * heap growth (up to four times what the last collection kept) let 100 to
 * 200 ms pauses build, which every call arriving meanwhile waits out. While
 * busy, the heap grows less before the next collection: more collections,
 * each short. When calm, V8's own growth again, since every full collection
 * marks the whole live heap and a recorder catching up pays for each.
 */

/**
 * Seconds in a row below the busy rate before V8's own growth comes back.
 * Long: a new growth applies only from the next full collection, so the
 * first one after the process turns busy still comes at V8's limit, long;
 * a process that stays set between bursts of calls does not pay that again.
 */
export const CALM_SECONDS = 300;
/** V8's flag value for its own growth. */
const V8_OWN_GROWTH = 0;

/** The flags set at start-up: pretenuring as configured, V8's own growth until the process is busy. */
export function startupGcFlags(gc: GcConfig): string[] {
  return [gc.pretenuring ? '--allocation-site-pretenuring' : '--no-allocation-site-pretenuring', growthFlag(V8_OWN_GROWTH)];
}

export const growthFlag = (percent: number): string => `--heap-growing-percent=${percent}`;

export interface GcLoad {
  busy: boolean;
  /** Seconds in a row below the busy rate while busy. */
  calmSeconds: number;
}

export const QUIET: GcLoad = { busy: false, calmSeconds: 0 };

/** After one more second with `callsPerSecond`: busy at once past the rate, calm again after CALM_SECONDS below it. */
export function nextGcLoad(load: GcLoad, callsPerSecond: number, busyCallsPerSecond: number): GcLoad {
  if (callsPerSecond >= busyCallsPerSecond) return { busy: true, calmSeconds: 0 };
  if (!load.busy) return QUIET;
  const calmSeconds = load.calmSeconds + 1;
  return calmSeconds >= CALM_SECONDS ? QUIET : { busy: true, calmSeconds };
}

/**
 * Follows the calls counted by `calls()` (a running total) once a second and
 * sets the heap's growth when the process turns busy or calm. V8 reads the
 * flag each time it sets the next collection's limit, after a collection.
 */
export class GcLoadFollower {
  private load = QUIET;
  private lastCount = 0;
  private lastAt = 0;
  private timer?: ReturnType<typeof setInterval>;

  constructor(
    private readonly gc: GcConfig,
    private readonly calls: () => number,
    private readonly logger: Pick<Logger, 'info'>,
    private readonly setFlags: (flag: string) => void = setFlagsFromString,
    private readonly now: () => number = Date.now,
  ) {}

  /** Does nothing when the busy growth is V8's own (nothing would change). */
  start(): void {
    if (this.gc.busy.heapGrowingPercent === V8_OWN_GROWTH) return;
    this.lastCount = this.calls();
    this.lastAt = this.now();
    this.timer = setInterval(() => this.tick(), 1_000);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
  }

  /** One look at the load (the timer's; tests call it). */
  tick(): void {
    const count = this.calls();
    const at = this.now();
    const perSecond = ((count - this.lastCount) * 1_000) / Math.max(1, at - this.lastAt);
    this.lastCount = count;
    this.lastAt = at;
    const next = nextGcLoad(this.load, perSecond, this.gc.busy.callsPerSecond);
    if (next.busy !== this.load.busy) {
      const percent = next.busy ? this.gc.busy.heapGrowingPercent : V8_OWN_GROWTH;
      this.setFlags(growthFlag(percent));
      this.logger.info(
        { component: 'gc', callsPerSecond: Math.round(perSecond), heapGrowingPercent: percent },
        next.busy ? 'busy: shorter full collections' : "calm: V8's own heap growth",
      );
    }
    this.load = next;
  }
}

/** Sets the start-up flags; returns them, for the log. */
export function applyStartupGcFlags(gc: GcConfig, setFlags: (flag: string) => void = setFlagsFromString): string[] {
  const flags = startupGcFlags(gc);
  for (const flag of flags) setFlags(flag);
  return flags;
}
