/**
 * Admission control for reads (docs/adr/030-admission-control.md): a bound on
 * the calls worked on at once and a short, bounded queue, shared fairly
 * between tenants, so that past capacity a call is refused at once (or after
 * a short wait) with a time to come back, instead of waiting until its
 * caller gives up. Plain code: the gRPC edge translates.
 */

export interface AdmissionLimits {
  /** Calls worked on at once. */
  maxInFlight: number;
  /** Calls waiting for a slot; past it a call is refused at once (0: none waits). */
  maxQueued: number;
  /** A call that waited this long without a slot is refused. */
  maxQueueWaitMs: number;
}

/**
 * Why a call was refused: `full` (no slot and no room to wait), `waited` (no
 * slot came within the wait allowed), `shed` (it was waiting, and a tenant
 * with fewer calls waiting took its place).
 */
export type RefusalReason = 'full' | 'waited' | 'shed';

export interface AdmissionRefusal {
  reason: RefusalReason;
  /** When to come back, in ms: the time the calls ahead need, stretched while most calls are refused. */
  retryAfterMs: number;
}

/** What happened to each call, for metrics; the tenant is as the call named it. */
export interface AdmissionEvents {
  admitted(tenant: string, waitedMs: number): void;
  queued(tenant: string): void;
  refused(tenant: string, reason: RefusalReason): void;
  /** The caller went away (cancelled, or its deadline passed) while the call waited: it was never worked on. */
  dropped(tenant: string): void;
}

export interface AdmissionHandlers {
  /** The call may be worked on now; `end()` of its ticket frees the slot. */
  admitted(): void;
  refused(refusal: AdmissionRefusal): void;
}

export interface AdmissionTicket {
  /** The call is answered, or its caller went away: frees its slot, or its place in the queue. Idempotent. */
  end(): void;
}

/** The figures a scrape reads. */
export interface AdmissionState {
  inFlight: number;
  queued: number;
  /** The pushback a call refused now would get. */
  retryAfterMs: number;
}

export const MIN_RETRY_AFTER_MS = 10;
export const MAX_RETRY_AFTER_MS = 2_000;
/** The overload factor stretches a pushback at most this much. */
const MAX_OVERLOAD_FACTOR = 10;
/** Weight of a new sample in the average time a call holds its slot. */
const SERVICE_TIME_WEIGHT = 0.1;
/** Refusals are counted over windows of this length: the share refused in the last full one stretches the pushback. */
const WINDOW_MS = 1_000;

interface Waiting {
  tenant: string;
  since: number;
  handlers: AdmissionHandlers;
  timer?: ReturnType<typeof setTimeout>;
}

type TicketState = 'waiting' | 'running' | 'ended';

const NO_EVENTS: AdmissionEvents = {
  admitted: () => undefined,
  queued: () => undefined,
  refused: () => undefined,
  dropped: () => undefined,
};

/**
 * Slots are taken in arrival order while there are free ones (work
 * conserving); once they are all taken, calls wait in a queue per tenant,
 * and a slot that frees goes to the tenants in turn (round robin), so a
 * tenant that floods waits behind itself, not in front of others. When the
 * queue is full, a tenant with fewer calls waiting than the one with the
 * most takes that one's newest place (it is refused, `shed`); otherwise the
 * new call is refused (`full`). A call waits at most `maxQueueWaitMs`.
 */
export class AdmissionLimiter {
  private inFlight = 0;
  private queuedCount = 0;
  /** Waiting calls per tenant, oldest first; the map's order is the round robin's (the next tenant first). */
  private readonly queues = new Map<string, Waiting[]>();
  /** Average time a call holds its slot, in ms. */
  private serviceMs: number;
  private window = { start: 0, arrivals: 0, refusals: 0 };
  private refusedShare = 0;

  constructor(
    private readonly limits: AdmissionLimits,
    private readonly events: AdmissionEvents = NO_EVENTS,
    private readonly now: () => number = Date.now,
  ) {
    if (!(limits.maxInFlight >= 1)) throw new RangeError('maxInFlight must be at least 1');
    this.serviceMs = MIN_RETRY_AFTER_MS;
    this.window.start = now();
  }

  /** Asks for a slot: `handlers.admitted` or `handlers.refused` is called once, now or later (unless the ticket ends first). */
  request(tenant: string, handlers: AdmissionHandlers): AdmissionTicket {
    const arrived = this.now();
    this.count(arrived, false);
    let state: TicketState = 'running';
    let admittedAt = arrived;
    const entry: Waiting = {
      tenant,
      since: arrived,
      handlers: {
        admitted: () => {
          state = 'running';
          admittedAt = this.now();
          handlers.admitted();
        },
        refused: (refusal) => {
          state = 'ended';
          handlers.refused(refusal);
        },
      },
    };
    const ticket: AdmissionTicket = {
      end: () => {
        if (state === 'running') {
          state = 'ended';
          this.serviceMs += SERVICE_TIME_WEIGHT * (this.now() - admittedAt - this.serviceMs);
          this.inFlight -= 1;
          this.admitNext();
        } else if (state === 'waiting') {
          state = 'ended';
          this.remove(entry);
          this.events.dropped(tenant);
        }
      },
    };
    if (this.inFlight < this.limits.maxInFlight && this.queuedCount === 0) {
      this.inFlight += 1;
      this.events.admitted(tenant, 0);
      handlers.admitted();
      return ticket;
    }
    if (!this.makeRoomFor(tenant)) {
      state = 'ended';
      this.refuse(entry, 'full');
      return ticket;
    }
    state = 'waiting';
    this.enqueue(entry);
    return ticket;
  }

  /**
   * Refuses a call of `tenant` before anything of it is read, when `request`
   * would refuse it at once (`full`): no free slot, the queue full, and no
   * tenant with two calls more waiting whose place it could take. Counted
   * as `request` counts a refusal. Undefined: the call may run or wait, so
   * ask `request` once it is read.
   */
  refuseEarly(tenant: string): AdmissionRefusal | undefined {
    if (this.placeFor(tenant) !== 'none') return undefined;
    const at = this.now();
    this.count(at, false);
    this.count(at, true);
    this.events.refused(tenant, 'full');
    return { reason: 'full', retryAfterMs: this.retryAfterMs() };
  }

  state(): AdmissionState {
    return { inFlight: this.inFlight, queued: this.queuedCount, retryAfterMs: this.retryAfterMs() };
  }

  /**
   * When a refused call should come back: the time the calls admitted and
   * waiting need to drain at the observed pace, stretched by how much more
   * is offered than taken (a third admitted: three times as long), within
   * [MIN_RETRY_AFTER_MS, MAX_RETRY_AFTER_MS]. Clients add jitter.
   */
  retryAfterMs(): number {
    const drainMs = ((this.inFlight + this.queuedCount) * this.serviceMs) / this.limits.maxInFlight;
    const overload = Math.min(MAX_OVERLOAD_FACTOR, 1 / Math.max(1 - this.refusedShare, 1 / MAX_OVERLOAD_FACTOR));
    const ms = Math.max(drainMs, this.serviceMs) * overload;
    return Math.round(Math.min(MAX_RETRY_AFTER_MS, Math.max(MIN_RETRY_AFTER_MS, ms)));
  }

  /**
   * Where a call of `tenant` would go now: a free slot, a free place in the
   * queue, the newest place of the tenant with the most calls waiting (two
   * or more beyond `tenant`'s: fairer), or none.
   */
  private placeFor(tenant: string): 'slot' | 'queue' | Waiting[] | 'none' {
    if (this.inFlight < this.limits.maxInFlight && this.queuedCount === 0) return 'slot';
    if (this.queuedCount < this.limits.maxQueued) return 'queue';
    if (this.limits.maxQueued === 0) return 'none';
    const own = this.queues.get(tenant)?.length ?? 0;
    let longest: Waiting[] | undefined;
    for (const queue of this.queues.values()) if (!longest || queue.length > longest.length) longest = queue;
    return longest && longest.length > own + 1 ? longest : 'none';
  }

  /** True when the queue has a place for `tenant`, shedding another tenant's newest call if that is fairer. */
  private makeRoomFor(tenant: string): boolean {
    const place = this.placeFor(tenant);
    if (place === 'none') return false;
    if (Array.isArray(place)) {
      const shed = place[place.length - 1];
      this.remove(shed);
      this.refuse(shed, 'shed');
    }
    return true;
  }

  private enqueue(entry: Waiting): void {
    const queue = this.queues.get(entry.tenant);
    if (queue) queue.push(entry);
    else this.queues.set(entry.tenant, [entry]);
    this.queuedCount += 1;
    this.events.queued(entry.tenant);
    entry.timer = setTimeout(() => {
      this.remove(entry);
      this.refuse(entry, 'waited');
    }, this.limits.maxQueueWaitMs);
    entry.timer.unref?.();
  }

  private remove(entry: Waiting): void {
    clearTimeout(entry.timer);
    const queue = this.queues.get(entry.tenant);
    const at = queue ? queue.indexOf(entry) : -1;
    if (!queue || at < 0) return;
    queue.splice(at, 1);
    this.queuedCount -= 1;
    if (queue.length === 0) this.queues.delete(entry.tenant);
  }

  /** Gives free slots to waiting calls, one tenant after another. */
  private admitNext(): void {
    while (this.inFlight < this.limits.maxInFlight && this.queuedCount > 0) {
      const [tenant, queue] = this.queues.entries().next().value as [string, Waiting[]];
      const entry = queue.shift()!;
      clearTimeout(entry.timer);
      this.queuedCount -= 1;
      // The tenant goes to the back of the turn (or leaves it, with nothing left waiting).
      this.queues.delete(tenant);
      if (queue.length > 0) this.queues.set(tenant, queue);
      this.inFlight += 1;
      this.events.admitted(tenant, this.now() - entry.since);
      entry.handlers.admitted();
    }
  }

  private refuse(entry: Waiting, reason: RefusalReason): void {
    this.count(this.now(), true);
    this.events.refused(entry.tenant, reason);
    entry.handlers.refused({ reason, retryAfterMs: this.retryAfterMs() });
  }

  /** Counts arrivals and refusals per window; at a window's end, its share of refusals is what stretches pushbacks. */
  private count(at: number, refused: boolean): void {
    if (at - this.window.start >= WINDOW_MS) {
      const elapsedWindows = Math.floor((at - this.window.start) / WINDOW_MS);
      // A window with no traffic after the last one: nothing is refused any more.
      this.refusedShare = elapsedWindows > 1 || this.window.arrivals === 0 ? 0 : this.window.refusals / this.window.arrivals;
      this.window = { start: at, arrivals: 0, refusals: 0 };
    }
    if (refused) this.window.refusals += 1;
    else this.window.arrivals += 1;
  }
}

/**
 * A slot for work that is not one unary call (a watch's snapshot): resolves
 * with the release once admitted; rejects with the refusal, or with
 * `signal`'s reason when the caller goes away while waiting.
 */
export function admission(limiter: AdmissionLimiter, tenant: string, signal: AbortSignal): Promise<() => void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason as Error);
    let settled = false;
    const onAbort = () => {
      if (settled) return;
      settled = true;
      ticket.end();
      reject(signal.reason as Error);
    };
    const ticket = limiter.request(tenant, {
      admitted: () => {
        settled = true;
        signal.removeEventListener('abort', onAbort);
        resolve(() => ticket.end());
      },
      refused: (refusal) => {
        settled = true;
        signal.removeEventListener('abort', onAbort);
        reject(new AdmissionRefused(refusal));
      },
    });
    if (!settled) signal.addEventListener('abort', onAbort, { once: true });
  });
}

/** A refusal as thrown by `admission()`. */
export class AdmissionRefused extends Error {
  constructor(readonly refusal: AdmissionRefusal) {
    super(`refused: ${refusal.reason}`);
  }
}
