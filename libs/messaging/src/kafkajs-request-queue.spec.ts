import { createRequire } from 'node:module';

/**
 * kafkajs 2.2.4's request queue, as patched (patches/kafkajs+2.2.4.patch,
 * ADR 037): after every answer from a broker it checks for requests held
 * back, then arms a timer for the next check. Unpatched, an idle connection
 * armed it with a negative delay (Node.js makes that 1 ms) and re-armed it
 * from the timer itself, forever: about 760 wake-ups a second for each
 * broker connection of every client. These cases fail on the unpatched file.
 */
interface RequestQueue {
  pending: unknown[];
  throttledUntil: number;
  throttleCheckTimeoutId: NodeJS.Timeout | null;
  checkPendingRequests(): void;
  destroy(): void;
}
type RequestQueueClass = new (options: Record<string, unknown>) => RequestQueue;

const RequestQueue = createRequire(__filename)('kafkajs/src/network/requestQueue') as RequestQueueClass;
const quiet = { debug: () => undefined, info: () => undefined, warn: () => undefined, error: () => undefined };
const queue = () =>
  new RequestQueue({
    maxInFlightRequests: 1,
    requestTimeout: 30_000,
    enforceRequestTimeout: false,
    clientId: 'spec',
    broker: 'spec:9092',
    logger: quiet,
  });
/** A request held back; never sent, since the queue has one in flight at most and this one stays in flight. */
const heldBack = () => ({ entry: { correlationId: 1 }, send: () => undefined });

describe('kafkajs request queue (patched): a check for held-back requests is armed only when there is one to make', () => {
  const cases: { name: string; pending: number; throttledForMs: number | null; armed: boolean }[] = [
    { name: 'idle: nothing held back, never throttled', pending: 0, throttledForMs: null, armed: false },
    { name: 'idle after a throttle that is over', pending: 0, throttledForMs: -5_000, armed: false },
    { name: 'throttled by the broker, nothing held back yet', pending: 0, throttledForMs: 5_000, armed: true },
    { name: 'requests held back, not throttled', pending: 1, throttledForMs: null, armed: true },
    { name: 'requests held back while throttled', pending: 2, throttledForMs: 5_000, armed: true },
  ];

  it.each(cases)('$name: armed $armed', ({ pending, throttledForMs, armed }) => {
    const q = queue();
    try {
      q.pending.push(...Array.from({ length: pending }, heldBack));
      // Not sendable while throttled or while one is in flight: what is pending stays pending.
      if (pending > 0) Object.assign(q, { inflight: new Map([[0, {}]]) });
      if (throttledForMs !== null) q.throttledUntil = Date.now() + throttledForMs;
      q.checkPendingRequests();
      expect(q.throttleCheckTimeoutId !== null).toBe(armed);
    } finally {
      q.destroy();
    }
  });

  it('an idle queue whose check fires does not arm another', () => {
    jest.useFakeTimers();
    const q = queue();
    try {
      q.pending.push(heldBack());
      Object.assign(q, { inflight: new Map([[0, {}]]) });
      q.checkPendingRequests();
      expect(q.throttleCheckTimeoutId).not.toBeNull();
      // What was held back went (an answer freed the slot); the armed check then finds nothing to do.
      q.pending.length = 0;
      jest.advanceTimersByTime(10);
      expect(q.throttleCheckTimeoutId).toBeNull();
      expect(jest.getTimerCount()).toBe(0);
    } finally {
      q.destroy();
      jest.useRealTimers();
    }
  });
});
