import type { Pool, PoolClient } from 'pg';
import {
  type ConversationEraser,
  type ConversationKey,
  type ErasureOutcome,
  keysTouchedBy,
  type PayloadVault,
  projectEvents,
  type TokenCounter,
} from '@toolhistory/domain';
import { o200kTokens } from '@toolhistory/tokenizer';
import { inTransaction } from './in-transaction';
import { notifyConversationsChanged } from './postgres-conversation-changes';
import { eraseStreamEvents, openRecorded, type RecordedRow, SELECT_RECORDED } from './postgres-event-store';
import { writeReadModelChanges } from './postgres-read-model-writer';
import { LIVE_SEARCH, lockConversationsForSearch, refreshSearchDocuments } from './postgres-search-documents';

/**
 * One transaction: the search locks of the conversation and of every fork
 * made of it (transitively) first (no document of them is being written),
 * then the stream row becomes the tombstone (taking the row lock the
 * recorder takes before it appends), then every event, read-model row and
 * search document of the conversation goes; and from each fork, every copy
 * whose payload came through the conversation (docs/adr/026), the fork's
 * read model made again from what it has left.
 */
export class PostgresConversationEraser implements ConversationEraser {
  constructor(
    private readonly pool: Pool,
    private readonly tokens: TokenCounter = o200kTokens,
    /** Opens a fork's remaining payloads to project it again (encryption at rest, docs/adr/033). */
    private readonly vault: PayloadVault | null = null,
  ) {}

  erase(tenantId: string, conversationId: string): Promise<ErasureOutcome> {
    return inTransaction(this.pool, async (client) => {
      const forks = await forksOf(client, tenantId, conversationId);
      await lockConversationsForSearch(client, [{ tenantId, conversationId }, ...forks], 'exclusive');
      const erasedEvents = await eraseStreamEvents(client, { tenantId, conversationId });
      // The reasoning state kept apart from the events goes with them.
      await client.query('DELETE FROM model_reasoning WHERE tenant_id = $1 AND conversation_id = $2', [tenantId, conversationId]);
      const erasedInvocations = await deleteReadModel(client, { tenantId, conversationId });
      await notifyConversationsChanged(client, [{ tenantId, conversationId }]);
      let erasedCopies = 0;
      for (const fork of forks) erasedCopies += await this.eraseCopies(client, fork, conversationId);
      return {
        erasedEvents,
        erasedInvocations,
        ...(forks.length === 0 ? {} : { erasedCopies, forks: forks.map((f) => f.conversationId) }),
      };
    });
  }

  /** The fork's events that came through `erased`, and its read model made again from the rest. */
  private async eraseCopies(client: PoolClient, fork: ConversationKey, erased: string): Promise<number> {
    const deleted = await client.query(
      `DELETE FROM events WHERE tenant_id = $1 AND conversation_id = $2 AND (payload -> 'forkedFrom' -> 'via')::jsonb ? $3`,
      [fork.tenantId, fork.conversationId, erased],
    );
    const copies = deleted.rowCount ?? 0;
    if (copies === 0) return 0;
    await deleteReadModel(client, fork);
    const { rows } = await client.query<RecordedRow>(
      `${SELECT_RECORDED} WHERE tenant_id = $1 AND conversation_id = $2 ORDER BY stream_position`,
      [fork.tenantId, fork.conversationId],
    );
    const events = (await openRecorded(rows, this.vault)).map((r) => r.event);
    const empty = { conversations: new Map(), runs: new Map(), invocations: new Map() };
    await writeReadModelChanges(client, projectEvents(empty, events, this.tokens), 'events');
    await refreshSearchDocuments(client, keysTouchedBy(events).invocations, { vault: this.vault, nowMs: Date.now() });
    await notifyConversationsChanged(client, [fork]);
    return copies;
  }
}

/** Every fork made of the conversation, and of those forks, and so on. */
async function forksOf(client: PoolClient, tenantId: string, conversationId: string): Promise<ConversationKey[]> {
  const { rows } = await client.query<{ conversation_id: string }>(
    `WITH RECURSIVE forks AS (
       SELECT conversation_id FROM conversation_forks WHERE tenant_id = $1 AND source_conversation_id = $2
       UNION
       SELECT f.conversation_id FROM conversation_forks f JOIN forks ON f.source_conversation_id = forks.conversation_id
       WHERE f.tenant_id = $1
     )
     SELECT conversation_id FROM forks WHERE conversation_id <> $2 ORDER BY conversation_id`,
    [tenantId, conversationId],
  );
  return rows.map((r) => ({ tenantId, conversationId: r.conversation_id }));
}

/** The conversation's read-model rows and search documents; answers how many invocations went. */
async function deleteReadModel(client: PoolClient, { tenantId, conversationId }: ConversationKey): Promise<number> {
  const key = [tenantId, conversationId];
  for (const table of [LIVE_SEARCH.words, LIVE_SEARCH.substring])
    await client.query(`DELETE FROM ${table} WHERE tenant_id = $1 AND conversation_id = $2`, key);
  await client.query('DELETE FROM external_event_traces WHERE tenant_id = $1 AND conversation_id = $2', key);
  const invocations = await client.query('DELETE FROM invocations WHERE tenant_id = $1 AND conversation_id = $2', key);
  await client.query('DELETE FROM model_responses WHERE tenant_id = $1 AND conversation_id = $2', key);
  await client.query('DELETE FROM runs WHERE tenant_id = $1 AND conversation_id = $2', key);
  await client.query('DELETE FROM conversations WHERE tenant_id = $1 AND conversation_id = $2', key);
  return invocations.rowCount ?? 0;
}
