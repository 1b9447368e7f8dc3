import type { ToolEvent } from '@toolhistory/contract';
import type {
  ConversationChange,
  ConversationKey,
  ConversationWatchReader,
  RecordedToolEvent,
  WatchedConversationUpdate,
} from '@toolhistory/domain';
import { ErrorCode } from '@toolhistory/errors';
import { ConversationChangeHub } from './conversation-change-hub';

const A = { tenantId: 't', conversationId: 'a' };
const B = { tenantId: 't', conversationId: 'b' };

/** A conversation's stream of run endings (each change names its stream position); reads answer when released. */
class FakeReader implements ConversationWatchReader {
  count = 0;
  erased = false;
  readonly reads: Array<{ conversation: string; after: number; release: () => void }> = [];

  read(): Promise<never> {
    throw new Error('the hub reads no snapshot');
  }

  readSince(conversation: ConversationKey, after: number): Promise<WatchedConversationUpdate> {
    const eventCount = this.count;
    const erased = this.erased;
    const events: RecordedToolEvent[] = Array.from({ length: Math.max(0, eventCount - after) }, (_, i) => ({
      globalPosition: String(after + i + 1),
      streamPosition: after + i + 1,
      recordedAt: 't',
      event: { type: 'RunCompleted', runId: 'r1', occurredAt: 't' } as ToolEvent,
    }));
    return new Promise((resolve) =>
      this.reads.push({
        conversation: conversation.conversationId,
        after,
        release: () => resolve({ eventCount, erased, events, invocations: [], runs: [] }),
      }),
    );
  }

  /** Releases the oldest read under way and lets its results reach the watches. */
  async releaseNext(): Promise<void> {
    this.reads.shift()!.release();
    await flush();
  }

  /** Releases reads until none is under way (each may call for another). */
  async settle(): Promise<void> {
    while (this.reads.length > 0) await this.releaseNext();
  }
}

const flush = () => new Promise<void>((resolve) => setImmediate(resolve));
const positions = (changes: ConversationChange[]) => changes.map((c) => Number(c.position));

describe('ConversationChangeHub', () => {
  it('reads once for all the watches of a conversation, and a watch that joined later skips what its snapshot holds', async () => {
    const reader = new FakeReader();
    const hub = new ConversationChangeHub(reader);
    const signal = new AbortController().signal;
    const first = hub.join(A);
    first.ready(0);
    await reader.settle(); // the read a watch asks for when it starts taking: nothing yet
    reader.count = 2;
    hub.changed([A, { tenantId: 'u', conversationId: 'a' }]);
    const second = hub.join(A);
    second.ready(1); // its snapshot holds event 1
    expect(reader.reads.map((r) => r.after)).toEqual([0]);
    await reader.settle();
    expect(positions(await first.next(signal))).toEqual([1, 2]);
    expect(positions(await second.next(signal))).toEqual([2]);
  });

  it('makes the notifications that come during a read one more read, after the position reached', async () => {
    const reader = new FakeReader();
    const hub = new ConversationChangeHub(reader);
    const watch = hub.join(A);
    reader.count = 1;
    watch.ready(0);
    hub.changed([A]);
    hub.changed([A]);
    hub.changed([A]);
    expect(reader.reads.map((r) => r.after)).toEqual([0]);
    reader.count = 3;
    await reader.releaseNext();
    expect(reader.reads.map((r) => r.after)).toEqual([1]);
    await reader.releaseNext();
    expect(reader.reads).toEqual([]);
    expect(positions(await watch.next(new AbortController().signal))).toEqual([1, 2, 3]);
  });

  it('reads every followed conversation again when the feed is current again, and forgets one nobody watches', async () => {
    const reader = new FakeReader();
    const hub = new ConversationChangeHub(reader);
    const a = hub.join(A);
    const b = hub.join(B);
    a.ready(0);
    b.ready(0);
    await reader.settle();
    hub.stale();
    expect(reader.reads).toEqual([]);
    hub.current();
    expect(reader.reads.map((r) => r.conversation).sort()).toEqual(['a', 'b']);
    await reader.releaseNext();
    await reader.releaseNext();
    a.leave();
    a.leave();
    expect(hub.followedCount).toBe(1);
    b.leave();
    expect(hub.followedCount).toBe(0);
  });

  it('ends every watch of an erased conversation with NOT_FOUND, after the changes it was given', async () => {
    const reader = new FakeReader();
    const hub = new ConversationChangeHub(reader);
    const signal = new AbortController().signal;
    const watches = [hub.join(A), hub.join(A)];
    reader.count = 1;
    for (const w of watches) w.ready(0);
    await reader.settle();
    reader.erased = true;
    hub.changed([A]);
    await reader.settle();
    for (const w of watches) {
      expect(positions(await w.next(signal))).toEqual([1]);
      await expect(w.next(signal)).rejects.toMatchObject({ code: ErrorCode.NotFound, message: 'conversation a was erased' });
    }
    expect(hub.followedCount).toBe(0); // ended: nothing left to read for
    for (const w of watches) w.leave();
    expect(hub.followedCount).toBe(0);
  });

  it('stops giving a watch changes past its bound, then reads from where it stopped once it has taken them', async () => {
    const reader = new FakeReader();
    const hub = new ConversationChangeHub(reader, 3);
    const signal = new AbortController().signal;
    const slow = hub.join(A);
    const quick = hub.join(A);
    reader.count = 3;
    slow.ready(0);
    quick.ready(0);
    await reader.settle();
    expect(positions(await quick.next(signal))).toEqual([1, 2, 3]);
    reader.count = 5;
    hub.changed([A]);
    await reader.settle();
    expect(positions(await quick.next(signal))).toEqual([4, 5]);
    // The slow watch holds 5 changes, over its bound of 3: it is given no more.
    reader.count = 7;
    hub.changed([A]);
    await reader.settle();
    expect(positions(await quick.next(signal))).toEqual([6, 7]);
    expect(positions(await slow.next(signal))).toEqual([1, 2, 3, 4, 5]);
    const waiting = slow.next(signal);
    await flush();
    expect(reader.reads.map((r) => r.after)).toEqual([5]);
    await reader.releaseNext();
    expect(positions(await waiting)).toEqual([6, 7]);
  });

  it('answers a watch that stops with nothing more', async () => {
    const hub = new ConversationChangeHub(new FakeReader());
    const abort = new AbortController();
    const watch = hub.join(A);
    watch.ready(0);
    const waiting = watch.next(abort.signal);
    abort.abort();
    expect(await waiting).toEqual([]);
  });
});
