import type { StoredToolEvent } from '@toolhistory/contract';
import { parsePolicyDocument, RecordBatch, type RecordBatchOutcome, START_POSITION } from '@toolhistory/domain';
import {
  PostgresAuditReader,
  PostgresConsumerOffsets,
  PostgresConversationEraser,
  PostgresEventStore,
  PostgresReadModelProjection,
  PostgresReadModelRebuilder,
  PostgresRecordingStore,
} from '@toolhistory/persistence';
import { freshSchema, FreshSchema } from '../../../../test/support/fresh-schema';
import { countRows, readModelChecksum } from '../../../../test/support/read-model-queries';
import { toolCall, toolResult } from '../../../../test/support/tool-event-factory';
import { agentTraffic } from '../../../../test/support/traffic';
import { waitFor } from '../../../../test/support/wait-for';
import { EventStoreDbEventStore, EventStoreRecordingStorage } from '@toolhistory/eventstoredb';
import { o200kTokens } from '@toolhistory/tokenizer';
import { InMemoryEventStoreDbClient } from '../../../../libs/eventstoredb/src/in-memory-eventstoredb-client.fixture';
import { EventStoreConversationEraser } from '../erasure/event-store-conversation-eraser';
import { RebuildReadModel } from '../rebuild/rebuild-read-model';
import { ReadModelProjector } from './read-model-projector';

const parsed = parsePolicyDocument({ tools: { run_sql: { maskArguments: ['$.query'] }, send_email: { persist: 'metadata' } } });
if (!parsed.ok) throw new Error(parsed.problems.join('\n'));
const redaction = parsed.policy.redaction;

/**
 * The pipeline used when events live in EventStoreDB (recorder appends to
 * the store, a projector feeds the read model with a checkpoint), run here
 * with the PostgreSQL adapter of the same port standing in for the store,
 * so it runs in every build: the read model must equal the one the
 * PostgreSQL recorder builds in its own transaction.
 */
describe('recording through the EventStore port, read model fed by the checkpointed projector (real PostgreSQL)', () => {
  let viaPort: FreshSchema;
  let reference: FreshSchema;

  beforeAll(async () => {
    viaPort = await freshSchema('via_port');
    reference = await freshSchema('via_recorder');
  });
  afterAll(async () => {
    await viaPort?.drop();
    await reference?.drop();
  });

  const batchesOf = (events: StoredToolEvent[], size: number) => {
    const out: StoredToolEvent[][] = [];
    for (let i = 0; i < events.length; i += size) out.push(events.slice(i, i + size));
    return out;
  };

  it('builds the same read model as the PostgreSQL recorder, exactly once across redeliveries, and keeps erasures', async () => {
    // Calls come before their results here: the port path cannot re-redact an early result (see the README).
    const events: StoredToolEvent[] = [...agentTraffic(4_000, { seed: 31, tenants: 2, conversations: 80, duplicateRate: 0.02 })];
    const store = new PostgresEventStore(viaPort.pool);
    const recorder = new RecordBatch(new EventStoreRecordingStorage(store, new PostgresConsumerOffsets(viaPort.pool)), {
      redaction,
      tokens: o200kTokens,
    });
    const reference_ = new PostgresRecordingStore(reference.pool, redaction);
    const projector = new ReadModelProjector(store, new PostgresReadModelProjection(viaPort.pool, store), { batchSize: 300 });
    projector.start();
    try {
      let offset = 0;
      for (const batch of batchesOf(events, 400)) {
        const command = {
          consumerGroup: 'g',
          topic: 't',
          partition: 0,
          events: batch.map((event) => ({ offset: String(offset++), event })),
          nextOffset: String(offset),
        };
        const first = await recorder.recordBatch(command);
        expect(first).toMatchObject({ appended: expect.any(Number), duplicates: expect.any(Number) });
        const { appended, duplicates } = first as RecordBatchOutcome;
        expect(appended + duplicates).toBe(batch.length);
        // A redelivery of the same batch (a crash before the offset moved) changes nothing.
        expect(await recorder.recordBatch(command)).toMatchObject({ appended: 0, alreadyCommitted: batch.length });
        await reference_.recordBatch(command);
      }
      const total = await countRows(reference.pool, 'events');
      expect(await countRows(viaPort.pool, 'events')).toBe(total);
      const last = (await store.readAll(START_POSITION, { limit: 100_000 })).pop()!.globalPosition;
      const projection = new PostgresReadModelProjection(viaPort.pool, store);
      await waitFor(
        () => projection.checkpoint(),
        (position) => position === last,
        { what: 'projector caught up' },
      );
      expect(await readModelChecksum(viaPort.pool)).toBe(await readModelChecksum(reference.pool));
      // Same rows as read, kept differently: the projection keeps its own payload copies (its events
      // may live elsewhere), the PostgreSQL recorder none.
      const copies = (pool: typeof reference.pool) =>
        pool.query<{ n: number }>('SELECT count(*)::int AS n FROM invocations WHERE arguments IS NOT NULL').then((r) => r.rows[0].n);
      expect(await copies(viaPort.pool)).toBeGreaterThan(0);
      expect(await copies(reference.pool)).toBe(0);

      // Erasure while the projector follows: gone from the store and the read model, and stays gone.
      const eraser = new EventStoreConversationEraser(store, new PostgresConversationEraser(viaPort.pool));
      const { rows } = await viaPort.pool.query<{ tenant_id: string; conversation_id: string }>(
        'SELECT tenant_id, conversation_id FROM conversations LIMIT 1',
      );
      const { tenant_id: tenantId, conversation_id: conversationId } = rows[0];
      const erased = await eraser.erase(tenantId, conversationId);
      expect(erased.erasedEvents).toBeGreaterThan(0);
      const late = events.filter((e) => e.tenantId === tenantId && e.conversationId === conversationId).slice(0, 3);
      expect(
        await recorder.recordBatch({
          consumerGroup: 'g',
          topic: 't',
          partition: 1,
          events: late.map((event, i) => ({ offset: String(i), event })),
          nextOffset: '3',
        }),
      ).toMatchObject({ appended: 0 });
      await new Promise((resolve) => setTimeout(resolve, 300));
      const left = await viaPort.pool.query('SELECT count(*)::int AS n FROM invocations WHERE tenant_id = $1 AND conversation_id = $2', [
        tenantId,
        conversationId,
      ]);
      expect(left.rows[0].n).toBe(0);
    } finally {
      await projector.stop();
    }
  });

  it('applies a batch once however often it is handed over, and never behind its checkpoint', async () => {
    const db = await freshSchema('projection_once');
    try {
      const store = new PostgresEventStore(db.pool);
      const events = [...agentTraffic(300, { seed: 32, tenants: 1, conversations: 5 })];
      for (const e of events) await store.append({ tenantId: e.tenantId, conversationId: e.conversationId }, [e]);
      const recorded = await store.readAll(START_POSITION, { limit: 1_000 });
      const projection = new PostgresReadModelProjection(db.pool, store);
      await projection.apply(recorded.slice(0, 200));
      const afterFirst = await readModelChecksum(db.pool);
      await projection.apply(recorded.slice(0, 200));
      await projection.apply(recorded.slice(100, 150));
      expect(await readModelChecksum(db.pool)).toBe(afterFirst);
      await Promise.all([projection.apply(recorded.slice(150)), projection.apply(recorded.slice(150))]);
      expect(await projection.checkpoint()).toBe(recorded[recorded.length - 1].globalPosition);
      const { rows } = await db.pool.query('SELECT sum(event_count)::int AS n FROM conversations');
      expect(rows[0].n).toBe(recorded.length);
    } finally {
      await db.drop();
    }
  });

  it('keeps the trace context of events held in EventStoreDB for the audit listing, and erases it with the conversation', async () => {
    // The EventStoreDB adapter on the in-memory model of its client: the trace context travels in the events' metadata.
    const db = await freshSchema('external_traces');
    try {
      const store = new EventStoreDbEventStore(new InMemoryEventStoreDbClient().asClient());
      const recorder = new RecordBatch(new EventStoreRecordingStorage(store, new PostgresConsumerOffsets(db.pool)), {
        redaction,
        tokens: o200kTokens,
      });
      const scope = { tenantId: 'acme', conversationId: 'traced', runId: 'r1' };
      const traceparent = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';
      const events: StoredToolEvent[] = [
        toolCall(scope, { roundIndex: 0, sequenceIndex: 0, toolCallId: 'c1' }),
        toolResult(scope, { roundIndex: 0, sequenceIndex: 0, toolCallId: 'c1' }),
      ];
      await recorder.recordBatch({
        consumerGroup: 'g',
        topic: 't',
        partition: 0,
        events: [
          { offset: '0', event: events[0], traceparent },
          { offset: '1', event: events[1] },
        ],
        nextOffset: '2',
      });
      expect(await countRows(db.pool, 'events')).toBe(0);
      await new PostgresReadModelProjection(db.pool, store).apply(await store.readAll(START_POSITION, { limit: 100 }));

      const [invocation] = await new PostgresAuditReader(db.pool).listInvocations({ tenantId: 'acme' }, null, 10);
      expect(invocation.traceId).toBe('4bf92f3577b34da6a3ce929d0e0e4736');

      const traces = async () => (await db.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM external_event_traces')).rows[0].n;
      expect(await traces()).toBe(1);

      // A database rebuilt from the store gets the trace contexts back.
      await db.pool.query('DELETE FROM external_event_traces');
      await new RebuildReadModel(store, new PostgresReadModelRebuilder(db.pool, store, 'row')).execute();
      expect(await traces()).toBe(1);
      const [rebuilt] = await new PostgresAuditReader(db.pool).listInvocations({ tenantId: 'acme' }, null, 10);
      expect(rebuilt.traceId).toBe('4bf92f3577b34da6a3ce929d0e0e4736');

      await new PostgresConversationEraser(db.pool).erase(scope.tenantId, scope.conversationId);
      expect(await traces()).toBe(0);
    } finally {
      await db.drop();
    }
  });
});
