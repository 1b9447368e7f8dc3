import type { Pool } from 'pg';
import type { ConversationRows, InvocationRow, PayloadVault, ReplayReader, RunRow } from '@toolhistory/domain';
import { openInvocationPayloads, openResponsePayloads, type SealedResponse } from './sealed-rows';
import { classifyPostgresError } from './postgres-errors';
import { type PostgresQueryCanceller, UNCANCELLABLE } from './postgres-query-canceller';
import { SELECT_INVOCATION_WITH_PAYLOADS, SELECT_RESPONSE, SELECT_RUN } from './read-model-tables';

/**
 * The events applied to the conversation, and the transaction that last
 * wrote its row: a rebuilt read model counts the same events, but in rows
 * written anew.
 */
const VERSION = `c.event_count::text || '.' || c.xmin::text`;

/**
 * One round trip per request: the conversation's channel, runs and
 * invocations come back as one row of JSON built by PostgreSQL.
 */
const READ_CONVERSATION = `
  SELECT c.channel, ${VERSION} AS version,
         (SELECT coalesce(json_agg(r), '[]'::json) FROM (${SELECT_RUN} WHERE tenant_id = $1 AND conversation_id = $2) r)::text AS runs,
         (SELECT coalesce(json_agg(i), '[]'::json) FROM (${SELECT_INVOCATION_WITH_PAYLOADS} WHERE tenant_id = $1 AND conversation_id = $2) i)::text AS invocations,
         (SELECT coalesce(json_agg(m), '[]'::json) FROM (
            SELECT r.*, k.state, k.state_seal AS "stateSeal", coalesce(k.tokens, 0) AS "reasoningTokens"
            FROM (${SELECT_RESPONSE} WHERE tenant_id = $1 AND conversation_id = $2) r
            LEFT JOIN model_reasoning k ON k.event_id = r."responseEventId"
          ) m)::text AS responses
  FROM conversations c
  WHERE c.tenant_id = $1 AND c.conversation_id = $2`;

const CONVERSATION_VERSION = `SELECT ${VERSION} AS version FROM conversations c WHERE c.tenant_id = $1 AND c.conversation_id = $2`;

export class PostgresReplayReader implements ReplayReader {
  private readonly canceller: Pick<PostgresQueryCanceller, 'query'>;

  constructor(
    private readonly pool: Pool,
    canceller?: PostgresQueryCanceller,
    /** Opens sealed payloads (encryption at rest); none: every payload read is in clear. */
    private readonly vault: PayloadVault | null = null,
  ) {
    this.canceller = canceller ?? UNCANCELLABLE;
  }

  async readConversation(tenantId: string, conversationId: string, signal?: AbortSignal): Promise<ConversationRows | null> {
    try {
      // The JSON comes as text and is parsed here, so its size is known for cache accounting.
      const { rows } = await this.canceller.query<{
        channel: string;
        version: string;
        runs: string;
        invocations: string;
        responses: string;
      }>(this.pool, { name: 'read-conversation', text: READ_CONVERSATION, values: [tenantId, conversationId] }, signal);
      if (rows.length === 0) return null;
      const { channel, version } = rows[0];
      const runs = JSON.parse(rows[0].runs) as RunRow[];
      const invocations = await openInvocationPayloads(
        JSON.parse(rows[0].invocations) as Array<InvocationRow & { result: unknown }>,
        this.vault,
      );
      return {
        channel,
        version,
        approxBytes: 2 * (rows[0].runs.length + rows[0].invocations.length + rows[0].responses.length),
        runs,
        responses: await openResponsePayloads(JSON.parse(rows[0].responses) as SealedResponse[], this.vault),
        // A result column that is SQL NULL means "no result yet".
        invocations: invocations.map((i) => ({ ...i, result: i.result === null ? undefined : (i.result as InvocationRow['result']) })),
      };
    } catch (error) {
      throw classifyPostgresError(error);
    }
  }

  async conversationVersion(tenantId: string, conversationId: string, signal?: AbortSignal): Promise<string | null> {
    try {
      const { rows } = await this.canceller.query<{ version: string }>(
        this.pool,
        { name: 'conversation-version', text: CONVERSATION_VERSION, values: [tenantId, conversationId] },
        signal,
      );
      return rows.length === 0 ? null : rows[0].version;
    } catch (error) {
      throw classifyPostgresError(error);
    }
  }
}
