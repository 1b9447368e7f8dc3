import type { Pool } from 'pg';
import type { ConversationEraser, ErasureOutcome } from '@toolhistory/domain';
import { inTransaction } from './in-transaction';
import { notifyConversationsChanged } from './postgres-conversation-changes';
import { eraseStreamEvents } from './postgres-event-store';
import { LIVE_SEARCH, lockConversationsForSearch } from './postgres-search-documents';

/**
 * One transaction: the conversation's search lock first (no document of it
 * is being written), then the stream row becomes the tombstone (taking the
 * row lock the recorder takes before it appends), then every event,
 * read-model row and search document of the conversation goes.
 */
export class PostgresConversationEraser implements ConversationEraser {
  constructor(private readonly pool: Pool) {}

  erase(tenantId: string, conversationId: string): Promise<ErasureOutcome> {
    const key = [tenantId, conversationId];
    return inTransaction(this.pool, async (client) => {
      await lockConversationsForSearch(client, [{ tenantId, conversationId }], 'exclusive');
      const erasedEvents = await eraseStreamEvents(client, { tenantId, conversationId });
      for (const table of [LIVE_SEARCH.words, LIVE_SEARCH.substring])
        await client.query(`DELETE FROM ${table} WHERE tenant_id = $1 AND conversation_id = $2`, key);
      await client.query('DELETE FROM external_event_traces WHERE tenant_id = $1 AND conversation_id = $2', key);
      const invocations = await client.query('DELETE FROM invocations WHERE tenant_id = $1 AND conversation_id = $2', key);
      await client.query('DELETE FROM runs WHERE tenant_id = $1 AND conversation_id = $2', key);
      await client.query('DELETE FROM conversations WHERE tenant_id = $1 AND conversation_id = $2', key);
      await notifyConversationsChanged(client, [{ tenantId, conversationId }]);
      return { erasedEvents, erasedInvocations: invocations.rowCount ?? 0 };
    });
  }
}
