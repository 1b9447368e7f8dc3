import type { Pool } from 'pg';
import type { ConversationRows, InvocationRow, ReplayReader, RunRow } from '@toolhistory/domain';
import { classifyPostgresError } from './postgres-errors';
import { SELECT_INVOCATION, SELECT_RUN } from './read-model-tables';

/**
 * One round trip per request: the conversation's channel, runs and
 * invocations come back as one row of JSON built by PostgreSQL.
 */
const READ_CONVERSATION = `
  SELECT c.channel,
         (SELECT coalesce(json_agg(r), '[]'::json) FROM (${SELECT_RUN} WHERE tenant_id = $1 AND conversation_id = $2) r) AS runs,
         (SELECT coalesce(json_agg(i), '[]'::json) FROM (${SELECT_INVOCATION} WHERE tenant_id = $1 AND conversation_id = $2) i) AS invocations
  FROM conversations c
  WHERE c.tenant_id = $1 AND c.conversation_id = $2`;

export class PostgresReplayReader implements ReplayReader {
  constructor(private readonly pool: Pool) {}

  async readConversation(tenantId: string, conversationId: string): Promise<ConversationRows | null> {
    try {
      const { rows } = await this.pool.query<{ channel: string; runs: RunRow[]; invocations: Array<InvocationRow & { result: unknown }> }>({
        name: 'read-conversation',
        text: READ_CONVERSATION,
        values: [tenantId, conversationId],
      });
      if (rows.length === 0) return null;
      const { channel, runs, invocations } = rows[0];
      return {
        channel,
        runs,
        // A result column that is SQL NULL means "no result yet".
        invocations: invocations.map((i) => ({ ...i, result: i.result === null ? undefined : (i.result as InvocationRow['result']) })),
      };
    } catch (error) {
      throw classifyPostgresError(error);
    }
  }
}
