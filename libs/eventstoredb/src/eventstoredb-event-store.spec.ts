import { randomUUID } from 'node:crypto';
import { ErrorCode } from '@toolhistory/errors';
import { RecordedToolEvent, START_POSITION, StreamRef } from '@toolhistory/domain';
import { describeEventStoreContract } from '../../../test/contract/event-store.contract';
import { uniqueName } from '../../../test/support/test-environment';
import { runCompleted, runCompletedV1, toolCall } from '../../../test/support/tool-event-factory';
import { EventStoreDbEventStore } from './eventstoredb-event-store';
import { InMemoryEventStoreDbClient } from './in-memory-eventstoredb-client.fixture';

/*
 * The adapter's own logic (idempotency, conflicts, filtering, erasure,
 * resuming, closing subscriptions) against a model of the client. The real
 * server is exercised by eventstoredb-event-store.int-spec.ts.
 */
describeEventStoreContract('EventStoreDB adapter on an in-memory model of its client (no server)', async () => {
  const client = new InMemoryEventStoreDbClient();
  return { store: new EventStoreDbEventStore(client.asClient()), close: () => Promise.resolve() };
});

describe('EventStoreDbEventStore, beyond the contract (in-memory model of the client)', () => {
  let client: InMemoryEventStoreDbClient;
  let store: EventStoreDbEventStore;

  beforeEach(() => {
    client = new InMemoryEventStoreDbClient();
    store = new EventStoreDbEventStore(client.asClient());
  });

  const newStream = (): StreamRef => ({ tenantId: uniqueName('tenant'), conversationId: uniqueName('conv') });
  const eventsOf = (stream: StreamRef, count: number) => {
    const scope = { ...stream, runId: uniqueName('run') };
    return [...Array.from({ length: count - 1 }, (_, i) => toolCall(scope, { roundIndex: 0, sequenceIndex: i })), runCompleted(scope)];
  };

  it('closes the server subscription when the consumer stops, and when the signal aborts while it waits', async () => {
    const stream = newStream();
    await store.append(stream, eventsOf(stream, 3));
    for await (const recorded of store.subscribe(START_POSITION, { tenantId: stream.tenantId })) {
      expect(recorded.streamPosition).toBe(1);
      break;
    }
    expect(client.openSubscriptions).toBe(0);

    const abort = new AbortController();
    const seen: RecordedToolEvent[] = [];
    const done = (async () => {
      for await (const recorded of store.subscribe(START_POSITION, { tenantId: stream.tenantId, signal: abort.signal }))
        seen.push(recorded);
    })();
    setTimeout(() => abort.abort(), 50);
    await done;
    expect(seen).toHaveLength(3);
    expect(client.openSubscriptions).toBe(0);
  });

  it('reads $all filtered on the server in pages, resuming after the last event seen, and stops at the limit', async () => {
    const stream = newStream();
    const other = newStream();
    const events = eventsOf(stream, 700);
    await store.append(stream, events.slice(0, 300));
    await store.append(other, eventsOf(other, 50));
    await store.append(stream, events.slice(300));

    const all = await store.readAll(START_POSITION, { tenantId: stream.tenantId, limit: 10_000 });
    expect(all.map((r) => r.event.eventId)).toEqual(events.map((e) => e.eventId));
    // Pages of 512 from the last position seen: the second page starts at that event again and ends short.
    expect(client.readsOfAll).toBe(2);

    client.readsOfAll = 0;
    const firstPage = await store.readAll(START_POSITION, { tenantId: stream.tenantId, limit: 600 });
    expect(firstPage.map((r) => r.event.eventId)).toEqual(events.slice(0, 600).map((e) => e.eventId));
    expect(client.readsOfAll).toBe(2);
    expect(client.openSubscriptions).toBe(0);
  });

  it('resumes exactly inside one multi-event append', async () => {
    const stream = newStream();
    const events = eventsOf(stream, 5);
    await store.append(stream, events);
    const all = await store.readAll(START_POSITION, { tenantId: stream.tenantId, limit: 100 });
    for (let i = 0; i < all.length; i += 1) {
      const rest = await store.readAll(all[i].globalPosition, { tenantId: stream.tenantId, limit: 100 });
      expect(rest.map((r) => r.event.eventId)).toEqual(events.slice(i + 1).map((e) => e.eventId));
    }
    // Positions beyond 2^53 stay exact.
    expect(BigInt(all[0].globalPosition) > 2n ** 53n).toBe(true);
  });

  it('fails a subscription retriably when the connection drops or the server ends it', async () => {
    const stream = newStream();
    await store.append(stream, eventsOf(stream, 1));
    for (const stop of [() => client.failSubscriptions(), () => client.endSubscriptions()]) {
      const seen: RecordedToolEvent[] = [];
      const done = (async () => {
        for await (const recorded of store.subscribe(START_POSITION, { tenantId: stream.tenantId })) seen.push(recorded);
      })();
      setTimeout(stop, 50);
      await expect(done).rejects.toMatchObject({ code: ErrorCode.StorageUnavailable, retriable: true });
      expect(seen).toHaveLength(1);
      expect(client.openSubscriptions).toBe(0);
    }
  });

  it('lets writers without an expectation all succeed, retrying when they race', async () => {
    const stream = newStream();
    const batches = Array.from({ length: 5 }, () => eventsOf(stream, 2));
    const results = await Promise.all(batches.map((batch) => store.append(stream, batch)));
    expect(results.every((r) => r.appended === 2 && r.duplicates === 0)).toBe(true);
    expect((await store.readStream(stream)).map((r) => r.streamPosition)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
  });

  it('answers a retry racing its own first attempt as a duplicate, whatever its expectation', async () => {
    const stream = newStream();
    await store.append(stream, eventsOf(stream, 1));
    const events = eventsOf(stream, 2);
    const results = await Promise.all([
      store.append(stream, events, { expectedPosition: 1 }),
      store.append(stream, events, { expectedPosition: 1 }),
    ]);
    expect(results.map((r) => r.appended).sort()).toEqual([0, 2]);
    expect(results.map((r) => r.streamPosition)).toEqual([3, 3]);
  });

  it('recognises an eventId whatever the case it is written in', async () => {
    const stream = newStream();
    const [event] = eventsOf(stream, 1);
    await store.append(stream, [event]);
    expect(await store.append(stream, [{ ...event, eventId: event.eventId.toUpperCase() }])).toEqual({
      streamPosition: 1,
      appended: 0,
      duplicates: 1,
    });
  });

  it('counts repeats within one append as duplicates', async () => {
    const stream = newStream();
    const [event] = eventsOf(stream, 1);
    expect(await store.append(stream, [event, event])).toEqual({ streamPosition: 1, appended: 1, duplicates: 1 });
  });

  it('blocks the events of a conversation erased before any arrived', async () => {
    const stream = newStream();
    expect(await store.deleteStream(stream)).toBe(0);
    await expect(store.append(stream, eventsOf(stream, 1))).rejects.toMatchObject({ code: ErrorCode.StreamErased });
  });

  it('hides an erased stream from a subscription that catches up over it', async () => {
    const erased = newStream();
    const kept = { tenantId: erased.tenantId, conversationId: uniqueName('conv') };
    await store.append(erased, eventsOf(erased, 2));
    await store.append(kept, eventsOf(kept, 2));
    await store.deleteStream(erased);
    // A new store knows nothing of the erasure: it has to find out.
    const fresh = new EventStoreDbEventStore(client.asClient());
    const abort = new AbortController();
    const seen: RecordedToolEvent[] = [];
    const done = (async () => {
      for await (const recorded of fresh.subscribe(START_POSITION, { tenantId: erased.tenantId, signal: abort.signal }))
        seen.push(recorded);
    })();
    setTimeout(() => abort.abort(), 50);
    await done;
    expect(seen.map((r) => r.event.conversationId)).toEqual([kept.conversationId, kept.conversationId]);
  });

  it('stores an event in the schema version it came in, and reads it upcast', async () => {
    const stream = newStream();
    const v1 = runCompletedV1({ ...stream, runId: 'r1' }, { usage: { inputTokens: 10, outputTokens: 2 } });
    await store.append(stream, [v1]);
    const [read] = await store.readStream(stream);
    expect(read.event).toMatchObject({ eventId: v1.eventId, schemaVersion: 2, usage: [{ inputTokens: 10, outputTokens: 2 }] });
    const [followed] = await store.readAll(START_POSITION, { tenantId: stream.tenantId, types: ['RunCompleted'], limit: 10 });
    expect(followed.event).toEqual(read.event);
  });

  it('refuses a position it did not hand out', async () => {
    await expect(store.readAll('-1', { limit: 1 })).rejects.toMatchObject({ code: ErrorCode.InvalidArgument });
    await expect(store.subscribe('1.5')[Symbol.asyncIterator]().next()).rejects.toMatchObject({ code: ErrorCode.InvalidArgument });
  });

  it('refuses a conversation id no stream name can hold', async () => {
    const stream = { tenantId: 'acme', conversationId: `bad-\ud800-${randomUUID()}` };
    await expect(store.append(stream, [])).rejects.toMatchObject({ code: ErrorCode.UnstorableEvent, retriable: false });
  });
});
