import { PostgresEventStore, PostgresReadModelProjection } from '@toolhistory/persistence';
import { freshSchema, type FreshSchema } from '../../../../test/support/fresh-schema';
import { countRows } from '../../../../test/support/read-model-queries';
import { uniqueName } from '../../../../test/support/test-environment';
import { runCompleted, toolCall, toolResult } from '../../../../test/support/tool-event-factory';
import { waitFor } from '../../../../test/support/wait-for';
import { ReadModelProjector } from './read-model-projector';

describe('the read-model projector meeting an event it cannot apply (real PostgreSQL)', () => {
  let db: FreshSchema;

  beforeAll(async () => {
    db = await freshSchema('projfail');
  });
  afterAll(async () => {
    await db?.drop();
  });

  it('skips that event with its reason and projects every other, for every tenant', async () => {
    const store = new PostgresEventStore(db.pool);
    const a = { tenantId: 'acme', conversationId: uniqueName('conv'), runId: 'r1' };
    const b = { tenantId: 'globex', conversationId: uniqueName('conv'), runId: 'r1' };
    // Valid by the contract before indices were bounded to 32 bits: already in the store, it cannot fit the read model.
    const tooWide = toolCall(a, { roundIndex: 3_000_000_000, sequenceIndex: 0, toolCallId: 'wide' });
    await store.append(a, [
      toolCall(a, { roundIndex: 0, sequenceIndex: 0, toolCallId: 'c0' }),
      tooWide,
      toolResult(a, { roundIndex: 0, sequenceIndex: 0, toolCallId: 'c0' }),
    ]);
    await store.append(b, [toolCall(b, { roundIndex: 0, sequenceIndex: 0, toolCallId: 'd0' }), runCompleted(b)]);

    const errors: Array<Record<string, unknown>> = [];
    const log = { info: () => undefined, warn: () => undefined, error: (fields: Record<string, unknown>) => errors.push(fields) };
    const projector = new ReadModelProjector(store, new PostgresReadModelProjection(db.pool, store), { batchSize: 100, log });
    projector.start();
    try {
      await waitFor(
        () => countRows(db.pool, 'invocations'),
        (n) => n === 2,
        { what: 'both tenants projected' },
      );
      await waitFor(
        async () => errors.length,
        (n) => n === 1,
        { what: 'the skip logged' },
      );
    } finally {
      await projector.stop();
    }
    const { rows } = await db.pool.query('SELECT event_id, error_code, reason FROM projection_failures');
    expect(rows).toEqual([{ event_id: tooWide.eventId, error_code: 'UNSTORABLE_EVENT', reason: expect.stringContaining('22003') }]);
    expect(errors[0]).toMatchObject({ eventId: tooWide.eventId, code: 'UNSTORABLE_EVENT' });
    const { rows: calls } = await db.pool.query(
      'SELECT tool_call_id, completed_at IS NOT NULL AS completed FROM invocations ORDER BY tool_call_id',
    );
    expect(calls).toEqual([
      { tool_call_id: 'c0', completed: true },
      { tool_call_id: 'd0', completed: false },
    ]);
  });
});
