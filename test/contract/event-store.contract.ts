import type { ToolEvent } from '../../libs/contract/src';
import { comparePositions, EventStore, RecordedToolEvent, START_POSITION, StreamRef } from '../../libs/domain/src';
import { uniqueName } from '../support/test-environment';
import { runCompleted, toolCall, toolResult } from '../support/tool-event-factory';

/**
 * The behaviour every EventStore adapter must have, as one suite that each
 * adapter's integration test runs against a real server (emmett-style
 * feature suites). Every test works in tenants of its own, so the suite can
 * share one store and one database with other tests.
 */
/** What an append answers of the global position: nothing, or exactly the last written event's. */
function positionOf(result: { globalPosition?: string }, last: { globalPosition: string }): { globalPosition?: string } {
  return result.globalPosition === undefined ? {} : { globalPosition: last.globalPosition };
}

export interface EventStoreHarness {
  store: EventStore;
  close(): Promise<void>;
}

export function describeEventStoreContract(adapter: string, open: () => Promise<EventStoreHarness>): void {
  describe(`EventStore contract: ${adapter}`, () => {
    let harness: EventStoreHarness;
    let store: EventStore;

    beforeAll(async () => {
      harness = await open();
      store = harness.store;
    });
    afterAll(() => harness?.close());

    const newStream = (): StreamRef => ({ tenantId: uniqueName('tenant'), conversationId: uniqueName('conv') });
    const runOf = (stream: StreamRef, events = 2): ToolEvent[] => {
      const scope = { ...stream, runId: uniqueName('run') };
      const out: ToolEvent[] = [];
      for (let i = 0; i < events - 1; i += 1) out.push(toolCall(scope, { roundIndex: 0, sequenceIndex: i }));
      out.push(runCompleted(scope));
      return out;
    };
    const ids = (events: readonly RecordedToolEvent[]) => events.map((e) => e.event.eventId);

    async function collect(after: string, tenantId: string, count: number, signal: AbortSignal): Promise<RecordedToolEvent[]> {
      const seen: RecordedToolEvent[] = [];
      for await (const recorded of store.subscribe(after, { tenantId, signal })) {
        seen.push(recorded);
        if (seen.length === count) break;
      }
      return seen;
    }

    it('appends to a stream and reads it back in order, positions from 1', async () => {
      const stream = newStream();
      const events = runOf(stream, 3);
      const result = await store.append(stream, events, { expectedPosition: 'no_stream' });
      const read = await store.readStream(stream);
      // The global position of the last event written, where the store tells it, is the one it reads back.
      expect(result).toEqual({ streamPosition: 3, appended: 3, duplicates: 0, ...positionOf(result, read[2]) });
      expect(read.map((r) => r.streamPosition)).toEqual([1, 2, 3]);
      expect(read.map((r) => r.event)).toEqual(events);
      expect(read.every((r) => !Number.isNaN(Date.parse(r.recordedAt)))).toBe(true);
      for (let i = 1; i < read.length; i += 1) expect(comparePositions(read[i - 1].globalPosition, read[i].globalPosition)).toBe(-1);
    });

    it('records an eventId once: a retried append is a success that writes nothing', async () => {
      const stream = newStream();
      const events = runOf(stream, 3);
      await store.append(stream, events.slice(0, 2));
      const retried = await store.append(stream, events, { expectedPosition: 2 });
      expect(retried).toEqual({
        streamPosition: 3,
        appended: 1,
        duplicates: 2,
        ...positionOf(retried, (await store.readStream(stream))[2]),
      });
      // Only duplicates: succeeds whatever the expectation, like a retry after a lost answer.
      const again = await store.append(stream, events, { expectedPosition: 0 });
      expect(again).toEqual({ streamPosition: 3, appended: 0, duplicates: 3 });
      expect(ids(await store.readStream(stream))).toEqual(events.map((e) => e.eventId));
    });

    it('refuses an append whose expected position is not the stream’s', async () => {
      const stream = newStream();
      await store.append(stream, runOf(stream, 2), { expectedPosition: 'no_stream' });
      await expect(store.append(stream, runOf(stream, 1), { expectedPosition: 'no_stream' })).rejects.toMatchObject({
        code: 'CONCURRENCY_CONFLICT',
      });
      await expect(store.append(stream, runOf(stream, 1), { expectedPosition: 1 })).rejects.toMatchObject({ code: 'CONCURRENCY_CONFLICT' });
      await expect(store.append(stream, runOf(stream, 1), { expectedPosition: 3 })).rejects.toMatchObject({ code: 'CONCURRENCY_CONFLICT' });
      const ok = await store.append(stream, runOf(stream, 1), { expectedPosition: 2 });
      expect(ok.streamPosition).toBe(3);
      expect(await store.readStream(stream)).toHaveLength(3);
    });

    it('lets exactly one of two writers with the same expectation win', async () => {
      const stream = newStream();
      await store.append(stream, runOf(stream, 1));
      const outcomes = await Promise.allSettled([
        store.append(stream, runOf(stream, 2), { expectedPosition: 1 }),
        store.append(stream, runOf(stream, 2), { expectedPosition: 1 }),
      ]);
      expect(outcomes.filter((o) => o.status === 'fulfilled')).toHaveLength(1);
      const failed = outcomes.find((o) => o.status === 'rejected') as PromiseRejectedResult;
      expect(failed.reason).toMatchObject({ code: 'CONCURRENCY_CONFLICT' });
      expect(await store.readStream(stream)).toHaveLength(3);
    });

    it('refuses events of another stream, naming the event', async () => {
      const stream = newStream();
      const other = runOf(newStream(), 1);
      await expect(store.append(stream, other)).rejects.toThrow(other[0].eventId);
    });

    it('reads all in global order after a position, by tenant and by type, a page at a time', async () => {
      const a = newStream();
      const b = { tenantId: a.tenantId, conversationId: uniqueName('conv') };
      const elsewhere = newStream();
      await store.append(a, runOf(a, 3));
      await store.append(elsewhere, runOf(elsewhere, 2));
      await store.append(b, runOf(b, 3));
      await store.append(a, runOf(a, 2));

      const all = await store.readAll(START_POSITION, { tenantId: a.tenantId, limit: 1_000 });
      expect(all).toHaveLength(8);
      expect(all.every((r) => r.event.tenantId === a.tenantId)).toBe(true);
      for (let i = 1; i < all.length; i += 1) expect(comparePositions(all[i - 1].globalPosition, all[i].globalPosition)).toBe(-1);

      const firstPage = await store.readAll(START_POSITION, { tenantId: a.tenantId, limit: 3 });
      const rest = await store.readAll(firstPage[2].globalPosition, { tenantId: a.tenantId, limit: 1_000 });
      expect([...ids(firstPage), ...ids(rest)]).toEqual(ids(all));

      const completions = await store.readAll(START_POSITION, { tenantId: a.tenantId, types: ['RunCompleted'], limit: 1_000 });
      expect(completions.map((r) => r.event.type)).toEqual(['RunCompleted', 'RunCompleted', 'RunCompleted']);
    });

    it('subscribes: catches up, then delivers live appends; a resumed subscription has no gap and no duplicate', async () => {
      const stream = newStream();
      const before = runOf(stream, 4);
      await store.append(stream, before);
      const abort = new AbortController();
      const live = runOf(stream, 4);
      const firstSix = collect(START_POSITION, stream.tenantId, 6, abort.signal);
      setTimeout(() => void store.append(stream, live), 100);
      const seen = await firstSix;
      expect(ids(seen)).toEqual([...before, ...live.slice(0, 2)].map((e) => e.eventId));

      const resumed = await collect(seen[5].globalPosition, stream.tenantId, 2, abort.signal);
      expect(ids(resumed)).toEqual(live.slice(2).map((e) => e.eventId));
      abort.abort();
    });

    it('ends a subscription when its signal aborts, also while it waits', async () => {
      const stream = newStream();
      await store.append(stream, runOf(stream, 1));
      const abort = new AbortController();
      const seen: RecordedToolEvent[] = [];
      const done = (async () => {
        for await (const recorded of store.subscribe(START_POSITION, { tenantId: stream.tenantId, signal: abort.signal }))
          seen.push(recorded);
      })();
      setTimeout(() => abort.abort(), 200);
      await done;
      expect(seen).toHaveLength(1);
    });

    it('never lets a subscriber skip an event committed after a later position was read (concurrent writers)', async () => {
      const tenantId = uniqueName('tenant');
      const writers = 6;
      const appendsPerWriter = 15;
      const abort = new AbortController();
      const expected = writers * appendsPerWriter * 2;
      const followed = collect(START_POSITION, tenantId, expected, abort.signal);
      await Promise.all(
        Array.from({ length: writers }, async (_, w) => {
          const stream = { tenantId, conversationId: `conv-${w}` };
          for (let i = 0; i < appendsPerWriter; i += 1) await store.append(stream, runOf(stream, 2));
        }),
      );
      const seen = await followed;
      abort.abort();
      expect(new Set(ids(seen)).size).toBe(expected);
      for (let i = 1; i < seen.length; i += 1) expect(comparePositions(seen[i - 1].globalPosition, seen[i].globalPosition)).toBe(-1);
      const stored = await store.readAll(START_POSITION, { tenantId, limit: 10_000 });
      expect(ids(seen)).toEqual(ids(stored));
    });

    it('deletes a stream: its events are gone, and it cannot be written again', async () => {
      const stream = newStream();
      const keep = newStream();
      await store.append(stream, runOf(stream, 3));
      await store.append(keep, runOf(keep, 2));
      expect(await store.deleteStream(stream)).toBe(3);
      expect(await store.readStream(stream)).toEqual([]);
      expect(await store.readAll(START_POSITION, { tenantId: stream.tenantId, limit: 100 })).toEqual([]);
      expect(await store.readStream(keep)).toHaveLength(2);
      await expect(store.append(stream, runOf(stream, 1))).rejects.toMatchObject({ code: 'STREAM_ERASED' });
      expect(await store.deleteStream(stream)).toBe(0);
      expect(await store.deleteStream(newStream())).toBe(0);
    });

    it('keeps payloads exactly, results of any JSON shape included', async () => {
      const stream = newStream();
      const scope = { ...stream, runId: 'r1' };
      const events: ToolEvent[] = [
        toolCall(scope, {
          roundIndex: 0,
          sequenceIndex: 0,
          toolCallId: '',
          arguments: { nested: { list: [1, 'two', null, true] }, ключ: 'значение' },
        }),
        toolResult(scope, { roundIndex: 0, sequenceIndex: 0, toolCallId: '', result: 'plain text result', isError: true }),
        toolResult(scope, { roundIndex: 0, sequenceIndex: 1, result: [1, 2, 3] }),
      ];
      await store.append(stream, events);
      expect((await store.readStream(stream)).map((r) => r.event)).toEqual(events);
    });

    it('keeps the trace context an event was appended with beside it, on every read, and never in its payload', async () => {
      const stream = newStream();
      const events = runOf(stream, 3);
      const traceparent = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';
      await store.append(stream, events, { traceparents: new Map([[events[0].eventId.toLowerCase(), traceparent]]) });
      const read = await store.readStream(stream);
      expect(read.map((r) => r.traceparent)).toEqual([traceparent, undefined, undefined]);
      expect(read[0].event).toEqual(events[0]);
      const all = await store.readAll(START_POSITION, { tenantId: stream.tenantId, limit: 10 });
      expect(all.map((r) => r.traceparent)).toEqual([traceparent, undefined, undefined]);
      const abort = new AbortController();
      const [first] = await collect(START_POSITION, stream.tenantId, 1, abort.signal);
      abort.abort();
      expect(first.traceparent).toBe(traceparent);
    });
  });
}
