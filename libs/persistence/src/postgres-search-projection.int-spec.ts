import type { ToolEvent } from '../../contract/src';
import { freshSchema, FreshSchema } from '../../../test/support/fresh-schema';
import { catchUpSearch } from '../../../test/support/read-model-queries';
import { toolCall, toolResult } from '../../../test/support/tool-event-factory';
import { PostgresConversationEraser } from './postgres-conversation-eraser';
import { PostgresRecordingStore } from './postgres-recording-store';

describe('the search projection beside erasure (real PostgreSQL)', () => {
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

    const { rows } = await db.pool.query<{ conversation_id: string; n: number }>(
      `SELECT conversation_id, count(*)::int AS n FROM invocation_search GROUP BY 1 ORDER BY 1`,
    );
    expect(rows).toEqual(
      conversations
        .filter((c) => !erased.includes(c))
        .sort()
        .map((conversation_id) => ({ conversation_id, n: 3 })),
    );
  });
});
