import type { Pool } from 'pg';
import type { ConversationKey, ConversationWatchReader, InvocationRecord, StoredRun, WatchedConversationState } from '@toolhistory/domain';
import { inTransaction } from './in-transaction';
import { SELECT_RECORD } from './postgres-audit-reader';
import { isoText } from './sql-rows';

/**
 * One conversation's rows for WatchConversation, read in one REPEATABLE
 * READ transaction: the event count, the erasure mark, the invocations and
 * the runs all stand at the same commit, so the count says exactly which
 * events the rows include (docs/adr/024-watch-a-conversation.md).
 */
export class PostgresConversationWatchReader implements ConversationWatchReader {
  constructor(private readonly pool: Pool) {}

  read({ tenantId, conversationId }: ConversationKey): Promise<WatchedConversationState> {
    const key = [tenantId, conversationId];
    return inTransaction(this.pool, async (client) => {
      await client.query('SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY');
      const conversation = await client.query<{ eventCount: number }>(
        'SELECT event_count AS "eventCount" FROM conversations WHERE tenant_id = $1 AND conversation_id = $2',
        key,
      );
      const stream = await client.query<{ erased: boolean }>(
        'SELECT erased_at IS NOT NULL AS erased FROM streams WHERE tenant_id = $1 AND conversation_id = $2',
        key,
      );
      // ListToolInvocations' filter (a row with a call or a result) and order, for one conversation.
      const invocations = await client.query<InvocationRecord>(
        `${SELECT_RECORD} WHERE tenant_id = $1 AND conversation_id = $2 AND at IS NOT NULL
         ORDER BY invocations.at, conversation_id, run_id, round_index, sequence_index, pair_key`,
        key,
      );
      const runs = await client.query<StoredRun>(
        `SELECT run_id AS "runId", status, ${isoText('started_at')} AS "startedAt", ${isoText('ended_at')} AS "endedAt",
                finish_reason AS "finishReason", error_code AS "errorCode", error_message AS "errorMessage"
         FROM runs WHERE tenant_id = $1 AND conversation_id = $2 ORDER BY started_at, run_id`,
        key,
      );
      return {
        eventCount: conversation.rows[0]?.eventCount ?? 0,
        erased: stream.rows[0]?.erased === true,
        invocations: invocations.rows.map((r) => ({ ...r, durationMs: r.durationMs === null ? null : Math.round(r.durationMs) })),
        runs: runs.rows,
      };
    });
  }
}
