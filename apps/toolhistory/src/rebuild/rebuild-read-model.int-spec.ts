import type { ToolEvent } from '@toolhistory/contract';
import { parsePolicyDocument, RecordedToolEvent, START_POSITION } from '@toolhistory/domain';
import {
  PostgresConversationEraser,
  PostgresEventStore,
  PostgresReadModelRebuilder,
  PostgresRecordingStore,
  PostgresReplayReader,
} from '@toolhistory/persistence';
import { freshSchema, FreshSchema } from '../../../../test/support/fresh-schema';
import {
  catchUpSearch,
  countRows,
  INVOCATION_RESULT,
  readModelChecksum,
  searchChecksum,
} from '../../../../test/support/read-model-queries';
import { runFailed, toolCall, toolResult } from '../../../../test/support/tool-event-factory';
import { agentTraffic } from '../../../../test/support/traffic';
import { RebuildReadModel } from './rebuild-read-model';

const parsed = parsePolicyDocument({ tools: { lookup_patient: { maskResult: ['$.diagnosis'] }, billing_probe: { persist: 'metadata' } } });
if (!parsed.ok) throw new Error(parsed.problems.join('\n'));
const redaction = parsed.policy.redaction;

/** Traffic with the cases a projection can get wrong: early results, failed runs, policy modes, duplicates. */
function trickyTraffic(seed: number): ToolEvent[][] {
  const events = [...agentTraffic(3_000, { seed, tenants: 3, conversations: 60, duplicateRate: 0.02 })];
  const scope = { tenantId: 'tenant-0', conversationId: 'patient-chat', runId: 'r-early' };
  const early = toolResult(scope, { roundIndex: 0, sequenceIndex: 0, result: { diagnosis: 'asthma', contact: 'pat@example.org' } });
  const call = toolCall(scope, { roundIndex: 0, sequenceIndex: 0, toolName: 'lookup_patient', arguments: { id: 'p-1' } });
  const probe = toolCall(
    { ...scope, runId: 'r-probe' },
    { roundIndex: 0, sequenceIndex: 0, toolName: 'billing_probe', arguments: { card: '4111 1111 1111 1111' } },
  );
  const failed = runFailed({ ...scope, runId: 'r-probe' });
  const batches: ToolEvent[][] = [];
  for (let i = 0; i < events.length; i += 250) batches.push(events.slice(i, i + 250));
  batches[1].push(early); // the result is recorded batches before its call
  batches[6].push(call, probe, failed);
  return batches;
}

async function recordAll(store: PostgresRecordingStore, batches: ToolEvent[][], offset = { next: 0 }) {
  for (const batch of batches) {
    const messages = batch.map((event) => ({ offset: String(offset.next++), event }));
    await store.recordBatch({ consumerGroup: 'g', topic: 't', partition: 0, events: messages, nextOffset: String(offset.next) });
  }
}

describe('rebuilding the read model from the event store (real PostgreSQL)', () => {
  let live: FreshSchema;
  let reference: FreshSchema;

  beforeAll(async () => {
    [live, reference] = await Promise.all([freshSchema('rebuild'), freshSchema('reference')]);
  });
  afterAll(async () => {
    await live?.drop();
    await reference?.drop();
  });

  const rebuildOf = (db: FreshSchema) => {
    const events = new PostgresEventStore(db.pool);
    return new RebuildReadModel(events, new PostgresReadModelRebuilder(db.pool, events, 'events'));
  };

  it('produces exactly the incrementally built read model (checksum over every row), keeping index names', async () => {
    const db = await freshSchema('rebuild_once');
    try {
      await recordAll(new PostgresRecordingStore(db.pool, redaction), trickyTraffic(21));
      await catchUpSearch(db.pool);
      const expected = await readModelChecksum(db.pool);
      const expectedSearch = await searchChecksum(db.pool);
      expect(expectedSearch).not.toMatch(/^0:/);
      const indexesBefore = await indexNames(db);
      const parametersBefore = await storageParameters(db);
      expect(parametersBefore.find((t) => t.relname === 'invocations')?.reloptions).toEqual(['fillfactor=75']);

      const outcome = await rebuildOf(db).execute({ pageSize: 700 });
      expect(outcome.events).toBe(await countRows(db.pool, 'events'));
      expect(await readModelChecksum(db.pool)).toBe(expected);
      // The search documents are made anew with the read model, equal to what the search projection wrote.
      expect(await searchChecksum(db.pool)).toBe(expectedSearch);
      expect(await indexNames(db)).toEqual(indexesBefore);
      expect(await storageParameters(db)).toEqual(parametersBefore);
      const leftovers = await db.pool.query(`SELECT tablename FROM pg_tables WHERE schemaname = $1 AND tablename ~ '_(rebuild|retired)$'`, [
        db.schema,
      ]);
      expect(leftovers.rows).toEqual([]);
      const checkpoints = await db.pool.query(`SELECT projection, position::text FROM projection_checkpoints ORDER BY projection`);
      expect(checkpoints.rows).toEqual([
        { projection: 'read-model', position: outcome.position },
        { projection: 'search', position: outcome.position },
        { projection: 'substring', position: outcome.position },
      ]);
    } finally {
      await db.drop();
    }
  });

  it('keeps answering and recording while it rebuilds, and ends equal to a read model that was never rebuilt', async () => {
    const batches = trickyTraffic(22);
    const half = Math.floor(batches.length / 2);
    await recordAll(new PostgresRecordingStore(reference.pool, redaction), batches);
    const liveStore = new PostgresRecordingStore(live.pool, redaction);
    const offset = { next: 0 };
    await recordAll(liveStore, batches.slice(0, half), offset);

    const reader = new PostgresReplayReader(live.pool);
    let reads = 0;
    let readFailures = 0;
    let rebuilding = true;
    const readers = (async () => {
      while (rebuilding) {
        await reader.readConversation('tenant-0', 'patient-chat').then(
          (rows) => (rows ? (reads += 1) : (readFailures += 1)),
          () => (readFailures += 1),
        );
      }
    })();
    // The second half is recorded while the rebuild runs: some before its swap, some during, some after.
    const recording = recordAll(liveStore, batches.slice(half), offset);
    const outcome = await rebuildOf(live).execute({ pageSize: 200 });
    await recording;
    rebuilding = false;
    await readers;

    expect(readFailures).toBe(0);
    expect(reads).toBeGreaterThan(0);
    expect(outcome.events).toBeGreaterThan(0);
    expect(await countRows(live.pool, 'events')).toBe(await countRows(reference.pool, 'events'));
    expect(await readModelChecksum(live.pool)).toBe(await readModelChecksum(reference.pool));
    // What the live projection wrote before, during and after the swap, and what the rebuild made, search like the reference.
    await catchUpSearch(live.pool);
    await catchUpSearch(reference.pool);
    expect(await searchChecksum(live.pool)).toBe(await searchChecksum(reference.pool));
  });

  it('takes the stored version of a result that was re-redacted after the rebuild read it', async () => {
    const db = await freshSchema('rebuild_early');
    try {
      const store = new PostgresRecordingStore(db.pool, redaction);
      const scope = { tenantId: 't1', conversationId: 'c1', runId: 'r1' };
      const early = toolResult(scope, { roundIndex: 0, sequenceIndex: 0, result: { diagnosis: 'asthma' } });
      await recordAll(store, [[early]]);
      const events = new PostgresEventStore(db.pool);
      const [asReadFirst] = await events.readAll(START_POSITION, { limit: 10 });
      expect(asReadFirst.event).toMatchObject({ result: { diagnosis: 'asthma' } });

      const rebuild = await new PostgresReadModelRebuilder(db.pool, events, 'events').begin();
      await rebuild.apply([asReadFirst]);
      // The call arrives now: the recorder re-redacts the stored result by the tool's rule.
      await recordAll(store, [[toolCall(scope, { roundIndex: 0, sequenceIndex: 0, toolName: 'lookup_patient' })]], { next: 1 });
      await catchUpSearch(db.pool);
      const expected = await readModelChecksum(db.pool);
      const expectedSearch = await searchChecksum(db.pool);
      await rebuild.swap(async (apply) => {
        const rest = await events.readAll(asReadFirst.globalPosition, { limit: 10 });
        await apply(rest);
        return rest[rest.length - 1].globalPosition;
      });
      const { rows } = await db.pool.query(`SELECT ${INVOCATION_RESULT} AS result FROM invocations`);
      expect(rows).toEqual([{ result: { diagnosis: '[REDACTED:$.diagnosis]' } }]);
      expect(await readModelChecksum(db.pool)).toBe(expected);
      expect(await searchChecksum(db.pool)).toBe(expectedSearch);
    } finally {
      await db.drop();
    }
  });

  it('never brings back a conversation erased while the rebuild ran', async () => {
    const db = await freshSchema('rebuild_erase');
    try {
      const store = new PostgresRecordingStore(db.pool, redaction);
      await recordAll(store, trickyTraffic(23));
      await catchUpSearch(db.pool);
      const events = new PostgresEventStore(db.pool);
      const rebuild = await new PostgresReadModelRebuilder(db.pool, events, 'events').begin();
      let position = START_POSITION;
      for (let page: RecordedToolEvent[]; (page = await events.readAll(position, { limit: 1_000 })).length > 0;) {
        await rebuild.apply(page);
        position = page[page.length - 1].globalPosition;
      }
      const erased = await new PostgresConversationEraser(db.pool).erase('tenant-0', 'patient-chat');
      expect(erased.erasedEvents).toBeGreaterThan(0);
      const expected = await readModelChecksum(db.pool);
      const expectedSearch = await searchChecksum(db.pool);
      await rebuild.swap(async () => position);
      for (const table of ['invocations', 'invocation_search', 'invocation_substring']) {
        const { rows } = await db.pool.query(`SELECT count(*)::int AS n FROM ${table} WHERE conversation_id = 'patient-chat'`);
        expect(rows[0].n).toBe(0);
      }
      expect(await readModelChecksum(db.pool)).toBe(expected);
      expect(await searchChecksum(db.pool)).toBe(expectedSearch);
    } finally {
      await db.drop();
    }
  });

  it('refuses a second rebuild of the same read model while one runs, and cleans up when abandoned', async () => {
    const db = await freshSchema('rebuild_twice');
    try {
      const events = new PostgresEventStore(db.pool);
      const rebuilder = new PostgresReadModelRebuilder(db.pool, events, 'events');
      const first = await rebuilder.begin();
      await expect(rebuilder.begin()).rejects.toMatchObject({ code: 'CONCURRENCY_CONFLICT' });
      await first.abandon();
      const again = await rebuilder.begin();
      await again.abandon();
      const leftovers = await db.pool.query(`SELECT tablename FROM pg_tables WHERE schemaname = $1 AND tablename ~ '_rebuild$'`, [
        db.schema,
      ]);
      expect(leftovers.rows).toEqual([]);
    } finally {
      await db.drop();
    }
  });
});

/** The tables' storage parameters (fillfactor): what LIKE ... INCLUDING ALL leaves behind. */
async function storageParameters(db: FreshSchema): Promise<Array<{ relname: string; reloptions: string[] | null }>> {
  const { rows } = await db.pool.query<{ relname: string; reloptions: string[] | null }>(
    `SELECT relname, reloptions FROM pg_class WHERE relnamespace = $1::regnamespace
     AND relname IN ('conversations', 'runs', 'invocations', 'invocation_search', 'invocation_substring') ORDER BY relname`,
    [db.schema],
  );
  return rows;
}

async function indexNames(db: FreshSchema): Promise<string[]> {
  const { rows } = await db.pool.query<{ indexname: string }>(
    `SELECT indexname FROM pg_indexes WHERE schemaname = $1 AND tablename IN ('conversations', 'runs', 'invocations', 'invocation_search', 'invocation_substring')
     ORDER BY indexname`,
    [db.schema],
  );
  return rows.map((r) => r.indexname);
}
