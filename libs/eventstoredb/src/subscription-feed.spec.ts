import { EventEmitter } from 'node:events';
import { PassThrough } from 'node:stream';
import { FeedItem, subscriptionFeed } from './subscription-feed';

/** A subscription whose buffer the test controls: `readableLength` is what it says. */
class ScriptedSubscription extends EventEmitter {
  readableLength = 0;
  pause = jest.fn();
  resume = jest.fn();
  unsubscribe = jest.fn(async () => {});
  destroy = jest.fn();
}

const event = (value: number): FeedItem<number> => ({ kind: 'event', value });
const caughtUp: FeedItem<number> = { kind: 'caughtUp' };

async function take<T>(feed: AsyncGenerator<FeedItem<T>>, count: number): Promise<FeedItem<T>[]> {
  const out: FeedItem<T>[] = [];
  for await (const item of feed) {
    out.push(item);
    if (out.length === count) break;
  }
  return out;
}

describe('subscriptionFeed', () => {
  it('queues the caught-up mark behind the events still buffered when it was emitted', async () => {
    const stream = new ScriptedSubscription();
    const items = take(subscriptionFeed<number>(stream), 5);
    await Promise.resolve();
    stream.emit('data', 1);
    stream.readableLength = 2;
    stream.emit('caughtUp');
    stream.readableLength = 1;
    stream.emit('data', 2);
    stream.readableLength = 0;
    stream.emit('data', 3);
    stream.emit('data', 4);
    expect(await items).toEqual([event(1), event(2), event(3), caughtUp, event(4)]);
  });

  it('passes a caught-up mark at once when nothing is buffered', async () => {
    const stream = new ScriptedSubscription();
    const items = take(subscriptionFeed<number>(stream), 2);
    await Promise.resolve();
    stream.emit('caughtUp');
    stream.emit('data', 1);
    expect(await items).toEqual([caughtUp, event(1)]);
  });

  it('keeps the order with a real object-mode stream that holds events while paused', async () => {
    const stream = Object.assign(new PassThrough({ objectMode: true }), { unsubscribe: jest.fn(async () => {}) });
    const items = take(subscriptionFeed<number>(stream, { highWaterMark: 2 }), 5);
    stream.write(1);
    stream.write(2);
    // The feed paused the stream: these wait in its buffer when the mark is emitted.
    stream.write(3);
    stream.write(4);
    expect(stream.readableLength).toBe(2);
    stream.emit('caughtUp');
    stream.write(5);
    expect(await items).toEqual([event(1), event(2), event(3), event(4), caughtUp]);
    expect(stream.unsubscribe).toHaveBeenCalled();
  });

  it('unsubscribes and destroys when the consumer stops iterating', async () => {
    const stream = new ScriptedSubscription();
    const items = take(subscriptionFeed<number>(stream), 1);
    await Promise.resolve();
    stream.emit('data', 1);
    expect(await items).toEqual([event(1)]);
    expect(stream.unsubscribe).toHaveBeenCalledTimes(1);
    expect(stream.destroy).toHaveBeenCalledTimes(1);
    expect(stream.listenerCount('data')).toBe(0);
    // A late error from the cancelled call is swallowed instead of crashing the process.
    expect(() => stream.emit('error', new Error('cancelled'))).not.toThrow();
  });

  it('returns when the signal aborts, also while it waits, and unsubscribes', async () => {
    const stream = new ScriptedSubscription();
    const abort = new AbortController();
    const seen: FeedItem<number>[] = [];
    const done = (async () => {
      for await (const item of subscriptionFeed<number>(stream, { signal: abort.signal })) seen.push(item);
    })();
    await Promise.resolve();
    stream.emit('data', 1);
    setTimeout(() => abort.abort(), 20);
    await done;
    expect(seen).toEqual([event(1)]);
    expect(stream.unsubscribe).toHaveBeenCalledTimes(1);
  });

  it('does not start when the signal has already aborted', async () => {
    const stream = new ScriptedSubscription();
    const abort = new AbortController();
    abort.abort();
    expect(await take(subscriptionFeed<number>(stream, { signal: abort.signal }), 1)).toEqual([]);
    expect(stream.unsubscribe).toHaveBeenCalled();
  });

  it('delivers what arrived before a failure, then throws it', async () => {
    const stream = new ScriptedSubscription();
    const failure = new Error('connection lost');
    const seen: FeedItem<number>[] = [];
    const done = (async () => {
      for await (const item of subscriptionFeed<number>(stream)) seen.push(item);
    })();
    await Promise.resolve();
    stream.emit('data', 1);
    stream.emit('error', failure);
    await expect(done).rejects.toBe(failure);
    expect(seen).toEqual([event(1)]);
    expect(stream.unsubscribe).toHaveBeenCalled();
  });

  it('returns when the stream ends', async () => {
    const stream = new ScriptedSubscription();
    const items = take(subscriptionFeed<number>(stream), 10);
    await Promise.resolve();
    stream.emit('data', 1);
    stream.emit('end');
    expect(await items).toEqual([event(1)]);
  });

  it('pauses the subscription while the consumer is behind, and resumes it once it catches up', async () => {
    const stream = new ScriptedSubscription();
    const feed = subscriptionFeed<number>(stream, { highWaterMark: 4 });
    const first = feed.next();
    await Promise.resolve();
    for (let i = 1; i <= 5; i += 1) stream.emit('data', i);
    expect(await first).toEqual({ done: false, value: event(1) });
    expect(stream.pause).toHaveBeenCalledTimes(1);
    expect(stream.resume).not.toHaveBeenCalled();
    await feed.next();
    await feed.next();
    expect(stream.resume).toHaveBeenCalledTimes(1);
    await feed.return();
    expect(stream.unsubscribe).toHaveBeenCalled();
  });
});
