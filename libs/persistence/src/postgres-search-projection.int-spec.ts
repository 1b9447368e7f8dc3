import type { ToolEvent } from '../../contract/src';
import { freshSchema, FreshSchema } from '../../../test/support/fresh-schema';
import { catchUpSearch } from '../../../test/support/read-model-queries';
import { toolCall, toolResult } from '../../../test/support/tool-event-factory';
import { PostgresAuditReader } from './postgres-audit-reader';
import { PostgresConversationEraser } from './postgres-conversation-eraser';
import { PostgresEventStore } from './postgres-event-store';
import { PostgresRecordingStore } from './postgres-recording-store';
import { PostgresSearchProjection, SEARCH_PROJECTIONS } from './postgres-search-projection';

describe('the search projections beside erasure (real PostgreSQL)', () => {
  let db: FreshSchema;

  beforeAll(async () => {
    db = await freshSchema('search_proj');
  });
  afterAll(() => db.drop());

  it('leaves no document of a conversation erased while its documents were being written', async () => {
    const conversations = Array.from({ length: 40 }, (_, i) => `c-${i}`);
    const events: ToolEvent[] = conversations.flatMap((conversationId) => {
      const scope = { tenantId: 'acme', conversationId, runId: 'r1' };
      return [0, 1, 2].flatMap((sequenceIndex) => [
        toolCall(scope, { roundIndex: 0, sequenceIndex, toolName: 'read_file', arguments: { path: `src/${conversationId}.ts` } }),
        toolResult(scope, { roundIndex: 0, sequenceIndex, result: `contents of ${conversationId}` as never }),
      ]);
    });
    await new PostgresRecordingStore(db.pool).recordBatch({
      consumerGroup: 'g',
      topic: 'events',
      partition: 0,
      events: events.map((event, i) => ({ offset: String(i), event })),
      nextOffset: String(events.length),
    });

    // Every other conversation is erased while the projection writes documents, in small batches so they interleave.
    const eraser = new PostgresConversationEraser(db.pool);
    const erased = conversations.filter((_, i) => i % 2 === 0);
    await Promise.all([catchUpSearch(db.pool, 6), ...erased.map((c) => eraser.erase('acme', c))]);
    await catchUpSearch(db.pool);

    for (const table of ['invocation_search', 'invocation_substring']) {
      const { rows } = await db.pool.query<{ conversation_id: string; n: number }>(
        `SELECT conversation_id, count(*)::int AS n FROM ${table} GROUP BY 1 ORDER BY 1`,
      );
      expect({ table, rows }).toEqual({
        table,
        rows: conversations
          .filter((c) => !erased.includes(c))
          .sort()
          .map((conversation_id) => ({ conversation_id, n: 3 })),
      });
    }
  });

  it('moves each search on its own checkpoint: word search answers while substring search is still behind', async () => {
    const other = await freshSchema('search_kinds');
    try {
      const scope = { tenantId: 'acme', conversationId: 'kitchen', runId: 'r1' };
      const events = [
        toolCall(scope, { roundIndex: 0, sequenceIndex: 0, toolName: 'boil_water', arguments: { appliance: 'kettle' } }),
        toolResult(scope, { roundIndex: 0, sequenceIndex: 0, result: 'kettle clicked off' as never }),
      ];
      await new PostgresRecordingStore(other.pool).recordBatch({
        consumerGroup: 'g',
        topic: 'events',
        partition: 0,
        events: events.map((event, i) => ({ offset: String(i), event })),
        nextOffset: String(events.length),
      });
      const recorded = await new PostgresEventStore(other.pool).readAll('0', { limit: 10 });
      const audit = new PostgresAuditReader(other.pool);
      const found = async (match: 'words' | 'substring') =>
        (await audit.searchInvocations({ tenantId: 'acme', query: match === 'words' ? 'kettle' : 'ettl', match, limit: 10 })).length;

      await new PostgresSearchProjection(other.pool, 'words').apply(recorded);
      expect({ words: await found('words'), substring: await found('substring') }).toEqual({ words: 1, substring: 0 });
      const checkpoints = await other.pool.query(`SELECT projection, position::text FROM projection_checkpoints ORDER BY projection`);
      expect(checkpoints.rows).toEqual([
        { projection: SEARCH_PROJECTIONS.words, position: String(recorded[1].globalPosition) },
        { projection: SEARCH_PROJECTIONS.substring, position: '0' },
      ]);

      await new PostgresSearchProjection(other.pool, 'substring').apply(recorded);
      expect({ words: await found('words'), substring: await found('substring') }).toEqual({ words: 1, substring: 1 });
    } finally {
      await other.drop();
    }
  });
});
