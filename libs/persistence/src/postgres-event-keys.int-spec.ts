import type { ToolEvent } from '../../contract/src';
import { invocationKeysTouchedBy, keysTouchedBy, type RecordedEventKeys } from '../../domain/src';
import { freshSchema, FreshSchema } from '../../../test/support/fresh-schema';
import { approvalDecided, approvalRequested, runCompleted, toolCall, toolResult } from '../../../test/support/tool-event-factory';
import { PostgresAppendListener } from './postgres-append-listener';
import { PostgresEventKeys } from './postgres-event-keys';
import { PostgresEventStore } from './postgres-event-store';

describe('PostgresEventKeys: the event store keys only (real PostgreSQL)', () => {
  let db: FreshSchema;
  let listener: PostgresAppendListener;
  let store: PostgresEventStore;
  let keys: PostgresEventKeys;

  beforeAll(async () => {
    db = await freshSchema('event_keys');
    listener = new PostgresAppendListener({ url: db.url, schema: db.schema, poolSize: 1 });
    store = new PostgresEventStore(db.pool, listener);
    keys = new PostgresEventKeys(db.pool, listener, { pageSize: 3 });
  });
  afterAll(async () => {
    await listener.close();
    await db.drop();
  });

  /** Calls with and without an id, an approval asked in one run and decided in a later one, results, a run's end. */
  function conversation(tenantId: string, conversationId: string): ToolEvent[] {
    const first = { tenantId, conversationId, runId: 'r1' };
    const later = { ...first, runId: 'r2' };
    const callId = `call_0_1_${first.runId}`;
    return [
      toolCall(first, { roundIndex: 0, sequenceIndex: 0, toolCallId: '' }),
      toolResult(first, { roundIndex: 0, sequenceIndex: 0, toolCallId: '', result: ['any', { shape: 1 }] as never }),
      toolCall(first, { roundIndex: 0, sequenceIndex: 1 }),
      approvalRequested(first, { roundIndex: 0, sequenceIndex: 1 }),
      runCompleted(first),
      approvalDecided(later, { roundIndex: 0, sequenceIndex: 1, approved: true, toolCallId: callId }),
      toolResult(later, { roundIndex: 0, sequenceIndex: 1, toolCallId: callId }),
      runCompleted(later),
    ];
  }

  async function collect(after: string, count: number, options: { tenantId?: string; types?: ToolEvent['type'][] }) {
    const abort = new AbortController();
    const seen: RecordedEventKeys[] = [];
    for await (const recorded of keys.subscribe(after, { ...options, signal: abort.signal })) {
      seen.push(recorded);
      if (seen.length === count) break;
    }
    return seen;
  }

  it('gives each event’s position, time and keys as the store reads them, and the invocations they touch', async () => {
    const tenantId = 'keys-acme';
    await store.append({ tenantId, conversationId: 'c1' }, conversation(tenantId, 'c1'), { expectedPosition: 'no_stream' });
    const events = await store.readAll('0', { tenantId, limit: 100 });
    const read = await keys.readKeys('0', { tenantId }, 100);

    expect(read.map((r) => [r.globalPosition, r.recordedAt, r.event.eventId, r.event.type])).toEqual(
      events.map((r) => [r.globalPosition, r.recordedAt, r.event.eventId, r.event.type]),
    );
    const touched = keysTouchedBy(events.map((r) => r.event));
    expect(invocationKeysTouchedBy(read.map((r) => r.event))).toEqual({
      conversations: touched.conversations,
      invocations: touched.invocations,
    });
    expect(touched.invocations.map((k) => `${k.runId} ${k.pairKey}`)).toEqual(['r1 pos:0:0', 'r1 id:call_0_1_r1', 'r2 id:call_0_1_r1']);
    // Taken from the column written on append, not from the payload.
    expect(read.map((r) => r.event.pairKey ?? r.event.toolCallId ?? null)).toEqual([
      'pos:0:0',
      'pos:0:0',
      'id:call_0_1_r1',
      'id:call_0_1_r1',
      null,
      'id:call_0_1_r1',
      'id:call_0_1_r1',
      null,
    ]);
  });

  it('takes the pair from the payload of an event appended before its key had a column', async () => {
    const tenantId = 'keys-older';
    await store.append({ tenantId, conversationId: 'c1' }, conversation(tenantId, 'c1'), { expectedPosition: 'no_stream' });
    const withColumn = await keys.readKeys('0', { tenantId }, 100);
    await db.pool.query('UPDATE events SET pair_key = NULL WHERE tenant_id = $1', [tenantId]);
    const fromPayload = await keys.readKeys('0', { tenantId }, 100);

    expect(fromPayload.every((r) => r.event.pairKey === undefined)).toBe(true);
    expect(fromPayload.filter((r) => r.event.toolCallId !== undefined).map((r) => r.event.type)).toEqual([
      'ToolCallRequested',
      'ToolResultReceived',
      'ToolCallRequested',
      'ToolApprovalRequested',
      'ToolApprovalDecided',
      'ToolResultReceived',
    ]);
    expect(invocationKeysTouchedBy(fromPayload.map((r) => r.event))).toEqual(invocationKeysTouchedBy(withColumn.map((r) => r.event)));
  });

  it('follows the store: by tenant and type, a page at a time, then live appends, resumed without gap or duplicate', async () => {
    const tenantId = 'keys-live';
    const types: ToolEvent['type'][] = ['ToolCallRequested', 'ToolResultReceived'];
    const before = await store.append({ tenantId, conversationId: 'c1' }, conversation(tenantId, 'c1'), { expectedPosition: 'no_stream' });
    expect(before.appended).toBe(8);
    const caughtUp = await collect('0', 4, { tenantId, types });
    expect(caughtUp.map((r) => r.event.type)).toEqual([
      'ToolCallRequested',
      'ToolResultReceived',
      'ToolCallRequested',
      'ToolResultReceived',
    ]);

    const live = collect(caughtUp[1].globalPosition, 6, { tenantId, types });
    await store.append({ tenantId, conversationId: 'c2' }, conversation(tenantId, 'c2'), { expectedPosition: 'no_stream' });
    const followed = await live;
    expect(followed.map((r) => r.globalPosition)).toEqual(
      [...caughtUp.slice(2), ...(await keys.readKeys(caughtUp[3].globalPosition, { tenantId, types }, 100))].map((r) => r.globalPosition),
    );
    expect(followed.map((r) => `${r.event.conversationId} ${r.event.type}`)).toEqual([
      'c1 ToolCallRequested',
      'c1 ToolResultReceived',
      'c2 ToolCallRequested',
      'c2 ToolResultReceived',
      'c2 ToolCallRequested',
      'c2 ToolResultReceived',
    ]);
  });
});
