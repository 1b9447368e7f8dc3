import type { Pool, PoolClient } from 'pg';
import { ConversationKey, conversationKeyString, InvocationKey, invocationKeyString } from '@toolhistory/domain';
import { invocationArgumentsSql, invocationResultSql } from './read-model-tables';

/** The two searches, each with its table, its projection and its checkpoint. */
export type SearchKind = 'words' | 'substring';
export const SEARCH_KINDS: readonly SearchKind[] = ['words', 'substring'];

/** What each search keeps of an invocation row aliased `row`, made by its SQL function from the row's tool name and payloads. */
const DOCUMENT: Record<SearchKind, { column: string; of: (row: string) => string }> = {
  // invocation_search_document, migration 009: the words, weighted by field.
  words: {
    column: 'document',
    of: (row) => `invocation_search_document(${row}.tool_name, ${invocationArgumentsSql(row)}, ${invocationResultSql(row)})`,
  },
  // invocation_substring_document, migration 021: the fields' text, for a trigram index.
  substring: {
    column: 'substring_text',
    of: (row) => `invocation_substring_document(${row}.tool_name, ${invocationArgumentsSql(row)}, ${invocationResultSql(row)})`,
  },
};

/** Where search documents live and the invocations they are made from: the live tables, or a rebuild's. */
export interface SearchTableNames {
  invocations: string;
  words: string;
  substring: string;
}

export const LIVE_SEARCH: SearchTableNames = { invocations: 'invocations', words: 'invocation_search', substring: 'invocation_substring' };

/**
 * Writes the documents of the given searches for each given invocation
 * from its row as it is now (what search reports on is the read model,
 * after redaction and the persist policy). A key without a row, erased
 * meanwhile, writes nothing.
 */
export async function refreshSearchDocuments(
  client: PoolClient,
  keys: readonly InvocationKey[],
  kinds: readonly SearchKind[] = SEARCH_KINDS,
  tables: SearchTableNames = LIVE_SEARCH,
): Promise<void> {
  if (keys.length === 0) return;
  const sorted = [...keys].sort((a, b) => compareText(invocationKeyString(a), invocationKeyString(b)));
  const values = [
    sorted.map((k) => k.tenantId),
    sorted.map((k) => k.conversationId),
    sorted.map((k) => k.runId),
    sorted.map((k) => k.pairKey),
  ];
  for (const kind of kinds) {
    const { column, of } = DOCUMENT[kind];
    await client.query(
      `INSERT INTO ${tables[kind]} (tenant_id, conversation_id, run_id, pair_key, at, ${column})
       SELECT i.tenant_id, i.conversation_id, i.run_id, i.pair_key, i.at, ${of('i')}
       FROM (
         -- A key names its event's run: the row's own, or the later run that recorded its result (cross-run-pairing.ts).
         SELECT DISTINCT ON (i.tenant_id, i.conversation_id, i.run_id, i.pair_key) i.*, k.n
         FROM unnest($1::text[], $2::text[], $3::text[], $4::text[]) WITH ORDINALITY AS k(tenant_id, conversation_id, run_id, pair_key, n)
         JOIN ${tables.invocations} i ON i.tenant_id = k.tenant_id AND i.conversation_id = k.conversation_id AND i.pair_key = k.pair_key
           AND (i.run_id = k.run_id OR i.result_run_id = k.run_id)
         ORDER BY i.tenant_id, i.conversation_id, i.run_id, i.pair_key, k.n
       ) i
       ORDER BY i.n
       ON CONFLICT (tenant_id, conversation_id, run_id, pair_key) DO UPDATE SET at = EXCLUDED.at, ${column} = EXCLUDED.${column}`,
      values,
    );
  }
}

/**
 * Fills a rebuild's search tables from its invocations (before their
 * indexes are built). Making documents is CPU work in PostgreSQL, and one
 * INSERT ... SELECT runs on one core; the rows are split by conversation
 * into `parts` statements per search on their own connections, run at once.
 */
export async function fillSearchDocuments(pool: Pool, tables: SearchTableNames, parts: number): Promise<void> {
  await Promise.all(
    SEARCH_KINDS.flatMap((kind) =>
      Array.from({ length: parts }, (_, part) =>
        pool.query(
          `INSERT INTO ${tables[kind]} (tenant_id, conversation_id, run_id, pair_key, at, ${DOCUMENT[kind].column})
           SELECT i.tenant_id, i.conversation_id, i.run_id, i.pair_key, i.at, ${DOCUMENT[kind].of('i')}
           FROM ${tables.invocations} i WHERE abs(hashtext(i.conversation_id)) % $1::int = $2::int`,
          [parts, part],
        ),
      ),
    ),
  );
}

/**
 * Documents are written after the rows they are made from were committed,
 * so an erasure could delete a conversation's rows between the read and the
 * write and leave a document of erased text behind. Both take this lock per
 * conversation first: the writer shared (several may write at once), the
 * erasure exclusive. Keys are taken in one order, so writers never deadlock
 * each other. The recorder takes no part in it.
 */
export async function lockConversationsForSearch(
  client: PoolClient,
  conversations: readonly ConversationKey[],
  mode: 'shared' | 'exclusive',
): Promise<void> {
  if (conversations.length === 0) return;
  const sorted = [...new Map(conversations.map((c) => [conversationKeyString(c), c])).values()].sort((a, b) =>
    compareText(conversationKeyString(a), conversationKeyString(b)),
  );
  const lock = mode === 'shared' ? 'pg_advisory_xact_lock_shared' : 'pg_advisory_xact_lock';
  await client.query(
    `SELECT ${lock}(hashtext(current_schema() || '.search'), hashtext(k.tenant_id || '/' || k.conversation_id))
     FROM unnest($1::text[], $2::text[]) WITH ORDINALITY AS k(tenant_id, conversation_id, n) ORDER BY k.n`,
    [sorted.map((c) => c.tenantId), sorted.map((c) => c.conversationId)],
  );
}

const compareText = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);
