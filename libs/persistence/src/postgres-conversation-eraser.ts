import type { Pool } from 'pg';
import type { ConversationEraser, ErasureOutcome } from '@toolhistory/domain';
import { inTransaction } from './in-transaction';
import { eraseStreamEvents } from './postgres-event-store';

/**
 * One transaction: the stream row becomes the tombstone first (taking the
 * row lock the recorder takes before it appends), then every event and
 * read-model row of the conversation goes.
 */
export class PostgresConversationEraser implements ConversationEraser {
  constructor(private readonly pool: Pool) {}

  erase(tenantId: string, conversationId: string): Promise<ErasureOutcome> {
    const key = [tenantId, conversationId];
    return inTransaction(this.pool, async (client) => {
      const erasedEvents = await eraseStreamEvents(client, { tenantId, conversationId });
      const invocations = await client.query('DELETE FROM invocations WHERE tenant_id = $1 AND conversation_id = $2', key);
      await client.query('DELETE FROM runs WHERE tenant_id = $1 AND conversation_id = $2', key);
      await client.query('DELETE FROM conversations WHERE tenant_id = $1 AND conversation_id = $2', key);
      return { erasedEvents, erasedInvocations: invocations.rowCount ?? 0 };
    });
  }
}
