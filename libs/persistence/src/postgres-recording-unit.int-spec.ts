import type { Pool, PoolClient } from 'pg';
import { GroupedRecording, isOffsetGap, parsePolicyDocument, RecordBatch } from '../../domain/src';
import { testTokens } from '../../domain/src/projection/test-tokens.fixture';
import { describeRecordingStorageContract } from '../../../test/contract/recording-storage.contract';
import { freshSchema, FreshSchema } from '../../../test/support/fresh-schema';
import { toolCall, toolResult } from '../../../test/support/tool-event-factory';
import { createPool } from './database';
import { PostgresConversationEraser } from './postgres-conversation-eraser';
import { PostgresEventStore } from './postgres-event-store';
import { PostgresRecordingStore } from './postgres-recording-store';
import { PostgresRecordingStorage } from './postgres-recording-unit';

describeRecordingStorageContract('PostgreSQL', async () => {
  const db = await freshSchema('recording');
  const eraser = new PostgresConversationEraser(db.pool);
  return {
    storage: new PostgresRecordingStorage(db.pool),
    events: new PostgresEventStore(db.pool),
    erase: async (stream) => void (await eraser.erase(stream.tenantId, stream.conversationId)),
    close: () => db.drop(),
  };
});

/**
 * A pool whose clients note each statement's first three words, and fail
 * the statements `failWhen` picks. Only for what checks clients out
 * (`pool.connect()`, as transactions do), not for `pool.query`.
 */
function observedPool(db: FreshSchema, statements: string[], failWhen: (text: string) => boolean = () => false): Pool {
  const pool = createPool({ url: db.url, schema: db.schema, poolSize: 1 });
  const connect = pool.connect.bind(pool) as () => Promise<PoolClient>;
  const observed = new WeakSet<PoolClient>();
  (pool as unknown as { connect: () => Promise<PoolClient> }).connect = async () => {
    const client = await connect();
    if (observed.has(client)) return client;
    observed.add(client);
    const query = client.query.bind(client) as (...args: unknown[]) => Promise<unknown>;
    (client as unknown as { query: (...args: unknown[]) => Promise<unknown> }).query = (...args: unknown[]) => {
      const first = args[0] as string | { text: string };
      const text = (typeof first === 'string' ? first : first.text).replace(/\s+/g, ' ').trim();
      statements.push(
        text
          .split(/[\s(]+/)
          .slice(0, 3)
          .join(' ')
          .replace(/[',]/g, ''),
      );
      return failWhen(text) ? Promise.reject(Object.assign(new Error('injected failure'), { code: '22P05' })) : query(...args);
    };
    return client;
  };
  return pool;
}

describe('PostgreSQL recording beyond the contract: one transaction, locks in order (real PostgreSQL)', () => {
  let db: FreshSchema;
  const parsed = parsePolicyDocument({ tools: { lookup_patient: { maskResult: ['$.diagnosis'] } } });
  if (!parsed.ok) throw new Error(parsed.problems.join('\n'));

  beforeAll(async () => {
    db = await freshSchema('recording_order');
  });
  afterAll(() => db.drop());

  it('takes the offset row first, the stream rows next and the append lock last, around the insert and the commit', async () => {
    const statements: string[] = [];
    const pool = observedPool(db, statements);
    try {
      const store = new PostgresRecordingStore(pool, parsed.policy.redaction);
      const scope = { tenantId: 't1', conversationId: 'ordered', runId: 'r1' };
      const batch = (from: number, events: ReturnType<typeof toolCall | typeof toolResult>[]) => ({
        consumerGroup: 'g',
        topic: 'order',
        partition: 0,
        events: events.map((event, i) => ({ offset: String(from + i), event })),
        nextOffset: String(from + events.length),
      });
      // A result before its call, so the call's batch also rewrites the stored result.
      await store.recordBatch(batch(0, [toolResult(scope, { roundIndex: 0, sequenceIndex: 0, result: { diagnosis: 'x' } })]));
      statements.length = 0;
      await store.recordBatch(batch(1, [toolCall(scope, { roundIndex: 0, sequenceIndex: 0, toolName: 'lookup_patient' })]));
      expect(statements).toEqual([
        'BEGIN',
        'INSERT INTO consumer_offsets', // the partition's offset row, locked
        'SELECT event_id FROM', // duplicates
        'INSERT INTO streams', // stream rows, locked (erased conversations dropped)
        'SELECT tenant_id AS', // the read-model rows touched: conversations,
        'SELECT tenant_id AS', // runs,
        'SELECT tenant_id AS', // invocations
        'SELECT payload to_json', // the early result, with when it was recorded,
        'UPDATE events SET', // re-redacted
        'INSERT INTO conversations',
        'INSERT INTO runs',
        'INSERT INTO invocations',
        'SELECT pg_notify toolhistory_conversations_changed',
        'UPDATE consumer_offsets SET', // the offset
        'SELECT pg_advisory_xact_lock hashtext', // the append lock, last
        'SELECT setval events_global_position_seq',
        'INSERT INTO events',
        'SELECT pg_notify toolhistory_events_appended',
        'SELECT pg_notify toolhistory_conversations_changed', // recording's progress, after the changes (read-your-writes)
        'COMMIT',
      ]);
    } finally {
      await pool.end();
    }
  });

  it('leaves nothing of a batch whose append fails: no event, no read-model row, no offset', async () => {
    const statements: string[] = [];
    const pool = observedPool(db, statements, (text) => text.startsWith('INSERT INTO events'));
    try {
      const store = new PostgresRecordingStore(pool);
      const scope = { tenantId: 't1', conversationId: 'rolled-back', runId: 'r1' };
      await expect(
        store.recordBatch({
          consumerGroup: 'g',
          topic: 'rollback',
          partition: 0,
          events: [{ offset: '0', event: toolCall(scope, { roundIndex: 0, sequenceIndex: 0 }) }],
          nextOffset: '1',
        }),
      ).rejects.toMatchObject({ code: 'UNSTORABLE_EVENT' });
      // The read model was written in the transaction, then rolled back with it.
      expect(statements).toEqual(expect.arrayContaining(['INSERT INTO conversations', 'UPDATE consumer_offsets SET', 'ROLLBACK']));
      const rows = await db.pool.query<{ events: number; conversations: number; streams: number }>(
        `SELECT (SELECT count(*)::int FROM events WHERE conversation_id = $1) AS events,
                (SELECT count(*)::int FROM conversations WHERE conversation_id = $1) AS conversations,
                (SELECT count(*)::int FROM streams WHERE conversation_id = $1) AS streams`,
        [scope.conversationId],
      );
      expect(rows.rows[0]).toEqual({ events: 0, conversations: 0, streams: 0 });
      expect((await new PostgresRecordingStore(db.pool).committedOffsets('g', 'rollback')).size).toBe(0);
    } finally {
      await pool.end();
    }
  });

  it('records batches that arrive together in one transaction, and a failing one alone while its neighbours commit', async () => {
    const statements: string[] = [];
    // One connection, its statements noted: what the grouped recording gathers shares one transaction.
    const pool = observedPool(db, statements);
    try {
      const rules = { redaction: parsed.policy.redaction, tokens: testTokens };
      const grouped = new GroupedRecording(new RecordBatch(new PostgresRecordingStorage(pool), rules));
      const batch = (partition: number, conversationId: string, result = 'ok') => {
        const scope = { tenantId: 't-grouped', conversationId, runId: 'r1' };
        return {
          consumerGroup: 'g',
          topic: 'grouped',
          partition,
          events: [
            { offset: '0', event: toolCall(scope, { roundIndex: 0, sequenceIndex: 0 }) },
            { offset: '1', event: toolResult(scope, { roundIndex: 0, sequenceIndex: 0, result }) },
          ],
          nextOffset: '2',
        };
      };
      const outcomes = await Promise.all([0, 1, 2, 3].map((p) => grouped.recordBatch(batch(p, `conv-${p}`))));
      for (const outcome of outcomes) expect(isOffsetGap(outcome) ? outcome : outcome.appended).toBe(2);
      // Arriving in one turn of the event loop, the four went in one transaction.
      expect(statements.filter((t) => t === 'COMMIT')).toHaveLength(1);
      expect(statements.filter((t) => t === 'INSERT INTO events')).toHaveLength(1);

      // A payload PostgreSQL cannot store (a NUL character) fails its batch alone; the others are recorded.
      statements.length = 0;
      const next = (partition: number, conversationId: string, result?: string) => {
        const b = batch(partition, conversationId, result);
        return { ...b, events: b.events.map((m, i) => ({ ...m, offset: String(2 + i) })), nextOffset: '4' };
      };
      const settled = await Promise.allSettled([
        grouped.recordBatch(next(0, 'conv-0b')),
        grouped.recordBatch(next(1, 'conv-1b', 'poison \u0000 here')),
        grouped.recordBatch(next(2, 'conv-2b')),
      ]);
      expect(settled.map((s) => s.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
      // Together first, rolled back; then each alone.
      expect(statements.filter((t) => ['COMMIT', 'ROLLBACK'].includes(t))).toEqual(['ROLLBACK', 'COMMIT', 'ROLLBACK', 'COMMIT']);
      expect(settled[1]).toMatchObject({ status: 'rejected', reason: { code: 'UNSTORABLE_EVENT' } });
      const offsets = await new PostgresRecordingStore(db.pool).committedOffsets('g', 'grouped');
      expect([...offsets.entries()].sort()).toEqual([
        [0, '4'],
        [1, '2'],
        [2, '4'],
        [3, '2'],
      ]);
      const { rows } = await db.pool.query<{ conversation_id: string }>(
        `SELECT DISTINCT conversation_id FROM events WHERE tenant_id = 't-grouped' ORDER BY 1`,
      );
      expect(rows.map((r) => r.conversation_id)).toEqual(['conv-0', 'conv-0b', 'conv-1', 'conv-2', 'conv-2b', 'conv-3']);
    } finally {
      await pool.end();
    }
  });
});
