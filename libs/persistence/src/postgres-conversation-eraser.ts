import type { Pool } from 'pg';
import type { ConversationEraser, ErasureOutcome } from '@toolhistory/domain';
import { inTransaction } from './in-transaction';

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
      await client.query(
        `INSERT INTO streams (tenant_id, conversation_id, version, erased_at) VALUES ($1, $2, 0, now())
         ON CONFLICT (tenant_id, conversation_id) DO UPDATE SET erased_at = coalesce(streams.erased_at, now())`,
        key,
      );
      const events = await client.query('DELETE FROM events WHERE tenant_id = $1 AND conversation_id = $2', key);
      const invocations = await client.query('DELETE FROM invocations WHERE tenant_id = $1 AND conversation_id = $2', key);
      await client.query('DELETE FROM runs WHERE tenant_id = $1 AND conversation_id = $2', key);
      await client.query('DELETE FROM conversations WHERE tenant_id = $1 AND conversation_id = $2', key);
      return { erasedEvents: events.rowCount ?? 0, erasedInvocations: invocations.rowCount ?? 0 };
    });
  }
}
