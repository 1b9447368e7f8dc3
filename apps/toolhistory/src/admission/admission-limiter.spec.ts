import fc from 'fast-check';
import {
  admission,
  type AdmissionEvents,
  AdmissionLimiter,
  type AdmissionLimits,
  type AdmissionRefusal,
  AdmissionRefused,
  type AdmissionTicket,
  MAX_RETRY_AFTER_MS,
  MIN_RETRY_AFTER_MS,
} from './admission-limiter';

/** One call as the edge makes it: what happened to it, and its ticket. */
interface Call {
  tenant: string;
  outcome: 'waiting' | 'admitted' | 'refused';
  refusal?: AdmissionRefusal;
  ticket: AdmissionTicket;
}

function harness(limits: AdmissionLimits) {
  const order: string[] = [];
  const counts = { admitted: 0, queued: 0, refused: 0, dropped: 0 };
  const events: AdmissionEvents = {
    admitted: () => void (counts.admitted += 1),
    queued: () => void (counts.queued += 1),
    refused: () => void (counts.refused += 1),
    dropped: () => void (counts.dropped += 1),
  };
  const limiter = new AdmissionLimiter(limits, events);
  const call = (tenant: string): Call => {
    const made: Partial<Call> = { tenant, outcome: 'waiting' };
    made.ticket = limiter.request(tenant, {
      admitted: () => {
        made.outcome = 'admitted';
        order.push(tenant);
      },
      refused: (refusal) => {
        made.outcome = 'refused';
        made.refusal = refusal;
      },
    });
    return made as Call;
  };
  return { limiter, call, order, counts };
}

describe('AdmissionLimiter', () => {
  beforeEach(() => jest.useFakeTimers({ now: 1_000_000 }));
  afterEach(() => jest.useRealTimers());

  it('admits at once up to its bound, queues up to its queue, and refuses the next at once', () => {
    const { limiter, call, counts } = harness({ maxInFlight: 2, maxQueued: 1, maxQueueWaitMs: 100 });
    const calls = ['a', 'a', 'a', 'a'].map(call);
    expect(calls.map((c) => c.outcome)).toEqual(['admitted', 'admitted', 'waiting', 'refused']);
    expect(calls[3].refusal).toEqual({ reason: 'full', retryAfterMs: expect.any(Number) });
    expect(limiter.state()).toMatchObject({ inFlight: 2, queued: 1 });
    calls[0].ticket.end();
    expect(calls[2].outcome).toBe('admitted');
    expect(counts).toEqual({ admitted: 3, queued: 1, refused: 1, dropped: 0 });
  });

  it('refuses a call that waited its longest without a slot', () => {
    const { limiter, call } = harness({ maxInFlight: 1, maxQueued: 4, maxQueueWaitMs: 100 });
    call('a');
    const waiting = call('a');
    jest.advanceTimersByTime(99);
    expect(waiting.outcome).toBe('waiting');
    jest.advanceTimersByTime(1);
    expect(waiting.outcome).toBe('refused');
    expect(waiting.refusal?.reason).toBe('waited');
    expect(limiter.state().queued).toBe(0);
  });

  it('gives freed slots to the tenants in turn, so a tenant that floods waits behind itself', () => {
    const { call, order } = harness({ maxInFlight: 1, maxQueued: 100, maxQueueWaitMs: 10_000 });
    let running = call('flood');
    const waiting = [...Array.from({ length: 10 }, () => call('flood')), call('quiet'), call('quiet'), call('other')];
    order.length = 0;
    for (let i = 0; i < 6; i += 1) {
      running.ticket.end();
      running = waiting.find((c) => c.outcome === 'admitted')!;
      waiting.splice(waiting.indexOf(running), 1);
    }
    expect(order).toEqual(['flood', 'quiet', 'other', 'flood', 'quiet', 'flood']);
  });

  it('when the queue is full, lets a tenant with fewer waiting take the newest place of the one with the most', () => {
    const { call, counts } = harness({ maxInFlight: 1, maxQueued: 4, maxQueueWaitMs: 10_000 });
    call('flood');
    const flood = Array.from({ length: 4 }, () => call('flood'));
    const quiet = call('quiet');
    expect(quiet.outcome).toBe('waiting');
    expect(flood.map((c) => c.outcome)).toEqual(['waiting', 'waiting', 'waiting', 'refused']);
    expect(flood[3].refusal?.reason).toBe('shed');
    // The flooding tenant's next call finds no one to take a place from: its own queue is the longest.
    expect(call('flood').refusal?.reason).toBe('full');
    // The quiet tenant takes places until the two have as many waiting; then neither takes the other's.
    expect(call('quiet').outcome).toBe('waiting');
    expect(flood[2].refusal?.reason).toBe('shed');
    expect(call('quiet').refusal?.reason).toBe('full');
    expect(counts.refused).toBe(4);
  });

  it('refuses early, before a call is read, exactly the calls it would refuse at once as full', () => {
    const { limiter, call, counts } = harness({ maxInFlight: 1, maxQueued: 3, maxQueueWaitMs: 10_000 });
    expect(limiter.refuseEarly('flood')).toBeUndefined(); // a free slot
    call('flood');
    expect(limiter.refuseEarly('flood')).toBeUndefined(); // room to wait
    call('flood');
    call('flood');
    call('flood');
    // The queue is full of the flooding tenant: its next call has nowhere to go; a quiet tenant's takes a place.
    expect(limiter.refuseEarly('flood')).toEqual({ reason: 'full', retryAfterMs: expect.any(Number) });
    expect(limiter.refuseEarly('quiet')).toBeUndefined();
    expect(call('quiet').outcome).toBe('waiting');
    // Two flood calls and one quiet call wait: neither tenant has two more waiting than the other.
    expect(limiter.refuseEarly('quiet')).toEqual({ reason: 'full', retryAfterMs: expect.any(Number) });
    expect(counts.refused).toBe(3); // the flood call shed for the quiet one, and the two refused early
    expect(limiter.state()).toMatchObject({ inFlight: 1, queued: 3 });
  });

  it('refuses early exactly when a request would be refused at once as full, over any sequence of calls (property)', () => {
    const limits = { maxInFlight: 2, maxQueued: 3, maxQueueWaitMs: 10_000 };
    const step = fc.oneof(fc.record({ arrive: fc.constantFrom('a', 'b', 'c') }), fc.record({ end: fc.nat({ max: 20 }) }));
    fc.assert(
      fc.property(fc.array(step, { maxLength: 60 }), (steps) => {
        const early = harness(limits);
        const plain = harness(limits);
        const live: Array<[Call | undefined, Call]> = [];
        for (const s of steps) {
          if ('arrive' in s) {
            const refusal = early.limiter.refuseEarly(s.arrive);
            const asked = plain.call(s.arrive);
            expect(refusal !== undefined).toBe(asked.outcome === 'refused' && asked.refusal?.reason === 'full');
            live.push([refusal === undefined ? early.call(s.arrive) : undefined, asked]);
          } else if (live.length > 0) {
            const [earlyCall, plainCall] = live.splice(s.end % live.length, 1)[0];
            earlyCall?.ticket.end();
            plainCall.ticket.end();
          }
          expect(early.limiter.state()).toEqual(plain.limiter.state());
          expect(early.counts).toEqual(plain.counts);
        }
      }),
    );
  });

  it('drops a waiting call whose caller went away: it is never admitted, and its place is free', () => {
    const { limiter, call, counts } = harness({ maxInFlight: 1, maxQueued: 1, maxQueueWaitMs: 10_000 });
    const running = call('a');
    const gone = call('a');
    gone.ticket.end();
    expect(counts.dropped).toBe(1);
    const next = call('a');
    expect(next.outcome).toBe('waiting');
    running.ticket.end();
    expect(gone.outcome).toBe('waiting');
    expect(next.outcome).toBe('admitted');
    expect(limiter.state()).toMatchObject({ inFlight: 1, queued: 0 });
  });

  it('frees a slot once however often a ticket ends', () => {
    const { limiter, call } = harness({ maxInFlight: 2, maxQueued: 0, maxQueueWaitMs: 100 });
    const one = call('a');
    call('a');
    one.ticket.end();
    one.ticket.end();
    expect(limiter.state().inFlight).toBe(1);
    expect(call('a').outcome).toBe('admitted');
    expect(call('a').outcome).toBe('refused');
  });

  describe('pushback', () => {
    it('is the time the calls ahead need at the pace observed, within its bounds', () => {
      const { limiter, call } = harness({ maxInFlight: 2, maxQueued: 100, maxQueueWaitMs: 10_000 });
      // Calls that hold their slot 40 ms each teach the limiter its pace.
      for (let i = 0; i < 60; i += 1) {
        const c = call('a');
        jest.advanceTimersByTime(40);
        c.ticket.end();
      }
      jest.advanceTimersByTime(2_000); // past the refusal window: nothing refused lately
      const quiet = limiter.retryAfterMs();
      expect(quiet).toBeGreaterThanOrEqual(35);
      expect(quiet).toBeLessThanOrEqual(45);
      // 2 running and 8 waiting at 40 ms a slot: about 200 ms to drain.
      for (let i = 0; i < 10; i += 1) call('a');
      const backlog = limiter.retryAfterMs();
      expect(backlog).toBeGreaterThan(150);
      expect(backlog).toBeLessThan(250);
    });

    it('stretches while most calls are refused, and relaxes once refusals stop', () => {
      const { limiter, call } = harness({ maxInFlight: 1, maxQueued: 0, maxQueueWaitMs: 10_000 });
      const running = call('a');
      const before = limiter.retryAfterMs();
      // Two of every three calls refused over a full window.
      for (let i = 0; i < 30; i += 1) {
        call('a');
        call('a');
        jest.advanceTimersByTime(40);
      }
      call('a'); // opens the next window
      const stretched = limiter.retryAfterMs();
      // Two of three refused: come back three times as late.
      expect(stretched).toBeGreaterThanOrEqual(before * 2.5);
      jest.advanceTimersByTime(3_000);
      call('a'); // after a quiet window: what was refused before no longer counts
      expect(limiter.retryAfterMs()).toBe(before);
      running.ticket.end();
    });

    it('never goes below or above its bounds', () => {
      const fast = harness({ maxInFlight: 100, maxQueued: 0, maxQueueWaitMs: 1 });
      fast.call('a').ticket.end();
      expect(fast.limiter.retryAfterMs()).toBe(MIN_RETRY_AFTER_MS);
      const slow = harness({ maxInFlight: 1, maxQueued: 1_000, maxQueueWaitMs: 100_000 });
      for (let i = 0; i < 1_000; i += 1) slow.call('a');
      expect(slow.limiter.retryAfterMs()).toBe(MAX_RETRY_AFTER_MS);
    });
  });

  describe('admission() for work that is not one call', () => {
    it('resolves with the release once admitted, after the calls ahead', async () => {
      const { limiter, call } = harness({ maxInFlight: 1, maxQueued: 1, maxQueueWaitMs: 10_000 });
      const running = call('a');
      const waiting = admission(limiter, 'b', new AbortController().signal);
      running.ticket.end();
      const release = await waiting;
      expect(limiter.state().inFlight).toBe(1);
      release();
      expect(limiter.state().inFlight).toBe(0);
    });

    it('rejects with the refusal, or when the caller goes away while waiting', async () => {
      const { limiter, call, counts } = harness({ maxInFlight: 1, maxQueued: 1, maxQueueWaitMs: 10_000 });
      call('a');
      const gone = new AbortController();
      const waiting = admission(limiter, 'b', gone.signal);
      await expect(admission(limiter, 'b', new AbortController().signal)).rejects.toEqual(expect.any(AdmissionRefused));
      gone.abort(new Error('cancelled'));
      await expect(waiting).rejects.toThrow('cancelled');
      expect(counts.dropped).toBe(1);
      expect(limiter.state().queued).toBe(0);
    });

    it('keeps its slot when the signal aborts after admission (the caller releases it)', async () => {
      const { limiter } = harness({ maxInFlight: 1, maxQueued: 0, maxQueueWaitMs: 100 });
      const controller = new AbortController();
      const release = await admission(limiter, 'a', controller.signal);
      controller.abort();
      expect(limiter.state().inFlight).toBe(1);
      release();
      expect(limiter.state().inFlight).toBe(0);
    });
  });
});
