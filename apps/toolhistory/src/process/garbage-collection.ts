import { constants, PerformanceObserver } from 'node:perf_hooks';
import { getHeapStatistics, setFlagsFromString } from 'node:v8';
import type { GcConfig } from '@toolhistory/config';
import type { Logger } from 'pino';

/**
 * V8's garbage collector, set by the service's settings and by its load
 * (docs/adr/035-garbage-collection-under-load.md, 036-full-collections-by-calls.md).
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
 * Bytes only approximate calls, though: where few of a call's objects
 * outlive a young collection, the heap grows slowly while calls pile up
 * strings, so after `callsPerFullCollection` calls without a full
 * collection the process has V8 start one.
 */

/**
 * Seconds in a row below the busy rate before V8's own growth comes back.
 * Long: a new growth applies only from the next full collection, so the
 * first one after the process turns busy comes at V8's old limit (or at
 * the calls bound, if that comes first); a process that stays set between
 * bursts of calls does not go through that again.
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

/** True when the calls since the last full collection (or the last one started) reach the bound; 0 never does. */
export function fullCollectionDue(callsSince: number, callsPerFullCollection: number): boolean {
  return callsPerFullCollection > 0 && callsSince >= callsPerFullCollection;
}

/** What the follower tells V8 and hears from it. */
export interface V8Collector {
  setFlags(flag: string): void;
  /** Has V8 start a full collection, marked beside the program. */
  startFullCollection(): void;
  /** Calls `listener` after each full collection, saying whether external memory started it; returns what stops it. */
  onFullCollection(listener: (collection: { byExternalMemory: boolean }) => void): () => void;
}

/**
 * V8's soft limit on the external memory it is told of: past its level at
 * the last full collection by this much, V8 starts one (incremental
 * marking, as when the heap reaches its limit).
 */
export const EXTERNAL_MEMORY_SOFT_LIMIT_BYTES = 64 * 1024 * 1024;
/** Above the soft limit by this much: external memory also moves between the collection and when it is read. */
const EXTERNAL_MEMORY_MARGIN_BYTES = 8 * 1024 * 1024;

/**
 * The process's V8. A full collection is started the way external memory
 * starts one: an ArrayBuffer just past the soft limit, dropped at once.
 * Zero-filled, a buffer that large is mapped without a page written (calloc
 * maps fresh memory), so it costs no resident memory, and the collection it
 * starts frees it.
 */
export function processV8Collector(): V8Collector {
  const externalMemory = () => getHeapStatistics().external_memory;
  // The level V8 measures from, as read just after the last full collection.
  let externalAtCollection = externalMemory();
  return {
    setFlags: setFlagsFromString,
    startFullCollection: () => {
      const bytes = EXTERNAL_MEMORY_SOFT_LIMIT_BYTES + Math.max(0, externalAtCollection - externalMemory()) + EXTERNAL_MEMORY_MARGIN_BYTES;
      void new ArrayBuffer(bytes).byteLength;
    },
    onFullCollection: (listener) => {
      const observer = new PerformanceObserver((entries) => {
        for (const entry of entries.getEntries()) {
          const { detail } = entry as { detail?: { kind?: number; flags?: number } };
          if (detail?.kind !== constants.NODE_PERFORMANCE_GC_MAJOR) continue;
          externalAtCollection = externalMemory();
          // The flag V8 gives a collection that external memory pressure started.
          listener({ byExternalMemory: ((detail.flags ?? 0) & constants.NODE_PERFORMANCE_GC_FLAGS_ALL_EXTERNAL_MEMORY) !== 0 });
        }
      });
      observer.observe({ entryTypes: ['gc'] });
      return () => observer.disconnect();
    },
  };
}

/** How often the calls since the last full collection are looked at: a quarter of a second's calls at most past the bound. */
export const COLLECTION_CHECK_MS = 250;

/**
 * Follows the calls counted by `calls()` (a running total): once a second it
 * sets the heap's growth when the process turns busy or calm (V8 reads the
 * flag each time it sets the next collection's limit, after a collection),
 * and every COLLECTION_CHECK_MS it has V8 start a full collection once
 * `callsPerFullCollection` calls came without one.
 */
export class GcLoadFollower {
  private load = QUIET;
  private lastCount = 0;
  private lastAt = 0;
  /** The call count at the last full collection, or at the last one started. */
  private countAtCollection = 0;
  private timers: Array<ReturnType<typeof setInterval>> = [];
  private stopListening?: () => void;
  private startingFailed = false;

  private readonly collector: V8Collector;
  private readonly now: () => number;
  private readonly onCollectionStarted: () => void;

  constructor(
    private readonly gc: GcConfig,
    private readonly calls: () => number,
    private readonly logger: Pick<Logger, 'info' | 'warn'>,
    options: { collector?: V8Collector; now?: () => number; onCollectionStarted?: () => void } = {},
  ) {
    this.collector = options.collector ?? processV8Collector();
    this.now = options.now ?? Date.now;
    this.onCollectionStarted = options.onCollectionStarted ?? (() => undefined);
  }

  /** Does nothing when neither the busy growth nor the calls bound would change anything. */
  start(): void {
    const byLoad = this.gc.busy.heapGrowingPercent !== V8_OWN_GROWTH;
    const byCalls = this.gc.callsPerFullCollection > 0;
    this.lastCount = this.countAtCollection = this.calls();
    this.lastAt = this.now();
    if (byLoad) this.timers.push(setInterval(() => this.tick(), 1_000));
    if (byCalls) {
      this.stopListening = this.collector.onFullCollection(() => (this.countAtCollection = this.calls()));
      this.timers.push(setInterval(() => this.checkCollection(), COLLECTION_CHECK_MS));
    }
    for (const timer of this.timers) timer.unref();
  }

  stop(): void {
    for (const timer of this.timers) clearInterval(timer);
    this.timers = [];
    this.stopListening?.();
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
      this.collector.setFlags(growthFlag(percent));
      this.logger.info(
        { component: 'gc', callsPerSecond: Math.round(perSecond), heapGrowingPercent: percent },
        next.busy ? 'busy: shorter full collections' : "calm: V8's own heap growth",
      );
    }
    this.load = next;
  }

  /** One look at the calls since the last full collection (the timer's; tests call it). */
  checkCollection(): void {
    if (this.startingFailed) return;
    const count = this.calls();
    if (!fullCollectionDue(count - this.countAtCollection, this.gc.callsPerFullCollection)) return;
    this.countAtCollection = count;
    try {
      this.collector.startFullCollection();
    } catch (error) {
      // Where even address space for the buffer is refused (a strict overcommit or address-space limit): V8 alone decides.
      this.startingFailed = true;
      this.logger.warn({ component: 'gc', err: error }, 'could not start a full collection; V8 alone decides from now on');
      return;
    }
    this.onCollectionStarted();
  }
}

/** Sets the start-up flags; returns them, for the log. */
export function applyStartupGcFlags(gc: GcConfig, setFlags: (flag: string) => void = setFlagsFromString): string[] {
  const flags = startupGcFlags(gc);
  for (const flag of flags) setFlags(flag);
  return flags;
}
