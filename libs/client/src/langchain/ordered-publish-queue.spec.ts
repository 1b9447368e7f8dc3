import type { PublishedEvent } from '../tool-event-publisher';
import { OrderedPublishQueue, ToolHistoryPublishError } from './ordered-publish-queue';

function deferred() {
  let resolve!: () => void;
  let reject!: (error: Error) => void;
  const promise = new Promise<void>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

const ack = (n: number): PublishedEvent => ({
  eventId: `e${n}`,
  type: 'ToolCallRequested',
  partition: 0,
  offset: String(n),
  consistencyToken: `ct1:k:agent.tool-events:0:${n}`,
});

describe('OrderedPublishQueue', () => {
  it('starts a step only once the one before it has finished, whatever order they would finish in', async () => {
    const queue = new OrderedPublishQueue();
    const first = deferred();
    const started: number[] = [];
    const one = queue.push('one', async () => {
      started.push(1);
      await first.promise;
      return ack(1);
    });
    const two = queue.push('two', async () => {
      started.push(2);
      return ack(2);
    });
    await new Promise((resolve) => setImmediate(resolve));
    expect(started).toEqual([1]);

    first.resolve();
    await expect(one).resolves.toEqual(ack(1));
    await expect(two).resolves.toEqual(ack(2));
    expect(started).toEqual([1, 2]);
    await expect(queue.settled()).resolves.toEqual([ack(1), ack(2)]);
  });

  it('goes on after a failed step; the step rejects, settled() rejects naming it, the listener hears of it', async () => {
    const onFailure = jest.fn();
    const queue = new OrderedPublishQueue(onFailure);
    const failed = queue.push('ToolCallRequested round 0 call 0', () => Promise.reject(new Error('broker down')));
    const next = queue.push('RunCompleted', async () => ack(2));

    await expect(failed).rejects.toThrow('broker down');
    await expect(next).resolves.toEqual(ack(2));
    const error = await queue.settled().then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(ToolHistoryPublishError);
    expect((error as ToolHistoryPublishError).message).toBe(
      '1 tool history event(s) not published: ToolCallRequested round 0 call 0: broker down',
    );
    expect((error as ToolHistoryPublishError).published).toEqual([ack(2)]);
    expect(onFailure).toHaveBeenCalledWith({ event: 'ToolCallRequested round 0 call 0', error: new Error('broker down') });
  });

  it('waits in settled() for steps pushed while it waits', async () => {
    const queue = new OrderedPublishQueue();
    const gate = deferred();
    void queue.push('one', async () => {
      await gate.promise;
      void queue.push('two', async () => ack(2));
      return ack(1);
    });
    const settled = queue.settled();
    gate.resolve();
    await expect(settled).resolves.toEqual([ack(1), ack(2)]);
  });

  it('keeps a failure whose listener throws', async () => {
    const queue = new OrderedPublishQueue(() => {
      throw new Error('listener broke');
    });
    await expect(queue.push('one', () => Promise.reject(new Error('refused')))).rejects.toThrow('refused');
    await expect(queue.push('two', async () => ack(2))).resolves.toEqual(ack(2));
    await expect(queue.settled()).rejects.toThrow('one: refused');
  });
});
