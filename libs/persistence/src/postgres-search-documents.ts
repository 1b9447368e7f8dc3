import type { Pool, PoolClient } from 'pg';
import { ConversationKey, conversationKeyString, InvocationKey, invocationKeyString, type PayloadVault } from '@toolhistory/domain';
import { invocationArgumentsSql, invocationResultSql, invocationSealsSql } from './read-model-tables';
import { openInvocationPayloads, type RowWithPayloads } from './sealed-rows';
import { isoText } from './sql-rows';

/** The two searches, each with its table, its projection and its checkpoint. */
export type SearchKind = 'words' | 'substring';
export const SEARCH_KINDS: readonly SearchKind[] = ['words', 'substring'];

/**
 * What each search keeps of an invocation, made by its SQL function from the
 * tool name and the payloads in clear (`d`: a row of DOCUMENT_SOURCES).
 */
const DOCUMENT: Record<SearchKind, { column: string; of: string }> = {
  // invocation_search_document, migration 009 (json since 010): the words, weighted by field.
  words: { column: 'document', of: 'invocation_search_document(d.tool_name, d.arguments, d.result)' },
  // invocation_substring_document, migration 021: the fields' text, for a trigram index.
  substring: { column: 'substring_text', of: 'invocation_substring_document(d.tool_name, d.arguments, d.result)' },
};

/** The invocations to make documents of, with their payloads in clear, as one JSON parameter ($1). */
const DOCUMENT_SOURCES = `ROWS FROM (json_to_recordset($1::json) AS (tenant_id text, conversation_id text, run_id text, pair_key text,
  at timestamptz, tool_name text, arguments json, result json)) WITH ORDINALITY AS d(tenant_id, conversation_id, run_id, pair_key, at,
  tool_name, arguments, result, n)`;

/** Where search documents live and the invocations they are made from: the live tables, or a rebuild's. */
export interface SearchTableNames {
  invocations: string;
  words: string;
  substring: string;
}

export const LIVE_SEARCH: SearchTableNames = { invocations: 'invocations', words: 'invocation_search', substring: 'invocation_substring' };

export interface SearchDocumentOptions {
  kinds?: readonly SearchKind[];
  tables?: SearchTableNames;
  /** Opens sealed payloads: documents are made of payloads in clear (docs/adr/033). */
  vault?: PayloadVault | null;
  /** Payloads whose retention ended by then make no document. */
  nowMs?: number;
}

interface SourceRow extends RowWithPayloads {
  runId: string;
  pairKey: string;
  at: string | null;
  toolName: string | null;
  callEventId: string | null;
  resultEventId: string | null;
}

/**
 * Writes the documents of the given searches for each given invocation
 * from its row as it is now (what search reports on is the read model,
 * after redaction and the persist policy), its sealed payloads opened
 * here: the documents are the one place payloads rest in clear, so they
 * go with erasure and expiry. An invocation whose every recorded payload
 * has expired has no document; a key without a row, erased meanwhile,
 * writes nothing.
 */
export async function refreshSearchDocuments(
  client: PoolClient,
  keys: readonly InvocationKey[],
  options: SearchDocumentOptions = {},
): Promise<void> {
  if (keys.length === 0) return;
  const { kinds = SEARCH_KINDS, tables = LIVE_SEARCH } = options;
  const sorted = [...keys].sort((a, b) => compareText(invocationKeyString(a), invocationKeyString(b)));
  const { rows: found } = await client.query<SourceRow>(
    `SELECT i.tenant_id AS "tenantId", i.conversation_id AS "conversationId", i.run_id AS "runId", i.pair_key AS "pairKey",
       ${isoText('i.at')} AS at, i.tool_name AS "toolName", i.call_event_id AS "callEventId", i.result_event_id AS "resultEventId",
       ${invocationArgumentsSql('i')} AS arguments, ${invocationResultSql('i')} AS result,
       i.approval_request_reason AS "approvalRequestReason", i.approval_decision_reason AS "approvalDecisionReason",
       ${invocationSealsSql('i')} AS "payloadSeals", i.expired_payloads AS "expiredPayloads"
     FROM (
       -- A key names its event's run: the row's own, or the later run that recorded its result (cross-run-pairing.ts).
       SELECT DISTINCT ON (i.tenant_id, i.conversation_id, i.run_id, i.pair_key) i.*, k.n
       FROM unnest($1::text[], $2::text[], $3::text[], $4::text[]) WITH ORDINALITY AS k(tenant_id, conversation_id, run_id, pair_key, n)
       JOIN ${tables.invocations} i ON i.tenant_id = k.tenant_id AND i.conversation_id = k.conversation_id AND i.pair_key = k.pair_key
         AND (i.run_id = k.run_id OR i.result_run_id = k.run_id)
       ORDER BY i.tenant_id, i.conversation_id, i.run_id, i.pair_key, k.n
     ) i
     ORDER BY i.n`,
    [sorted.map((k) => k.tenantId), sorted.map((k) => k.conversationId), sorted.map((k) => k.runId), sorted.map((k) => k.pairKey)],
  );
  await writeDocuments(client, await openInvocationPayloads(found, options.vault ?? null, options.nowMs), kinds, tables);
}

/** Upserts the documents of rows whose payloads are in clear; deletes those of rows with no payload left. */
async function writeDocuments(
  client: PoolClient,
  rows: readonly SourceRow[],
  kinds: readonly SearchKind[],
  tables: SearchTableNames,
): Promise<void> {
  const gone = rows.filter(everyPayloadExpired);
  const kept = rows.filter((r) => !everyPayloadExpired(r));
  const sources = JSON.stringify(
    kept.map((r) => ({
      tenant_id: r.tenantId,
      conversation_id: r.conversationId,
      run_id: r.runId,
      pair_key: r.pairKey,
      at: r.at,
      tool_name: r.toolName,
      arguments: r.expiredPayloads?.includes('arguments') ? null : r.arguments,
      result: r.expiredPayloads?.includes('result') ? null : r.result,
    })),
  );
  if (kept.length > 0) await client.query(upsertDocumentsSql(kinds, tables), [sources]);
  if (gone.length > 0) for (const kind of kinds) await deleteDocuments(client, gone, tables[kind]);
}

/**
 * One statement that upserts the documents of the given searches from the
 * sources ($1, read once): each search's table in turn, in the sources'
 * order (so concurrent writers lock rows in one order).
 */
function upsertDocumentsSql(kinds: readonly SearchKind[], tables: SearchTableNames): string {
  const upserts = kinds.map((kind) => {
    const { column, of } = DOCUMENT[kind];
    return `INSERT INTO ${tables[kind]} (tenant_id, conversation_id, run_id, pair_key, at, ${column})
       SELECT d.tenant_id, d.conversation_id, d.run_id, d.pair_key, d.at, ${of} FROM sources d ORDER BY d.n
       ON CONFLICT (tenant_id, conversation_id, run_id, pair_key) DO UPDATE SET at = EXCLUDED.at, ${column} = EXCLUDED.${column}`;
  });
  const last = upserts.pop()!;
  return `WITH sources AS MATERIALIZED (SELECT * FROM ${DOCUMENT_SOURCES})${upserts.map((u, i) => `, written_${i} AS (${u})`).join('')} ${last}`;
}

/** Every payload the invocation recorded (its arguments, its result) has expired: nothing of it is searchable any more. */
const everyPayloadExpired = (row: SourceRow): boolean => {
  const recorded = [...(row.callEventId ? ['arguments'] : []), ...(row.resultEventId ? ['result'] : [])];
  return recorded.length > 0 && recorded.every((f) => row.expiredPayloads?.includes(f as 'arguments' | 'result'));
};

/** Deletes the documents of the given invocations from one search table. */
export async function deleteDocuments(
  client: PoolClient,
  keys: ReadonlyArray<Pick<InvocationKey, 'tenantId' | 'conversationId' | 'runId' | 'pairKey'>>,
  table: string,
): Promise<number> {
  const deleted = await client.query(
    `DELETE FROM ${table} s USING unnest($1::text[], $2::text[], $3::text[], $4::text[]) AS k(tenant_id, conversation_id, run_id, pair_key)
     WHERE s.tenant_id = k.tenant_id AND s.conversation_id = k.conversation_id AND s.run_id = k.run_id AND s.pair_key = k.pair_key`,
    [keys.map((k) => k.tenantId), keys.map((k) => k.conversationId), keys.map((k) => k.runId), keys.map((k) => k.pairKey)],
  );
  return deleted.rowCount ?? 0;
}

/**
 * Fills a rebuild's search tables from its invocations (before their
 * indexes are built). Rows in clear are made in PostgreSQL, split by
 * conversation into `parts` statements per search on their own
 * connections, run at once (one INSERT ... SELECT runs on one core); rows
 * with sealed payloads are opened here, a batch at a time.
 */
export async function fillSearchDocuments(
  pool: Pool,
  tables: SearchTableNames,
  parts: number,
  vault: PayloadVault | null = null,
): Promise<void> {
  await Promise.all(
    SEARCH_KINDS.flatMap((kind) =>
      Array.from({ length: parts }, (_, part) =>
        pool.query(
          `INSERT INTO ${tables[kind]} (tenant_id, conversation_id, run_id, pair_key, at, ${DOCUMENT[kind].column})
           SELECT d.tenant_id, d.conversation_id, d.run_id, d.pair_key, d.at, ${DOCUMENT[kind].of}
           FROM (SELECT i.tenant_id, i.conversation_id, i.run_id, i.pair_key, i.at, i.tool_name,
                   ${invocationArgumentsSql('i')} AS arguments, ${invocationResultSql('i')} AS result
                 FROM ${tables.invocations} i
                 WHERE i.payload_seals IS NULL AND abs(hashtext(i.conversation_id)) % $1::int = $2::int) d`,
          [parts, part],
        ),
      ),
    ),
  );
  let after: [string, string, string, string] = ['', '', '', ''];
  for (;;) {
    const { rows } = await pool.query<InvocationKey>(
      `SELECT tenant_id AS "tenantId", conversation_id AS "conversationId", run_id AS "runId", pair_key AS "pairKey"
       FROM ${tables.invocations} WHERE payload_seals IS NOT NULL AND (tenant_id, conversation_id, run_id, pair_key) > ($1, $2, $3, $4)
       ORDER BY tenant_id, conversation_id, run_id, pair_key LIMIT 1000`,
      after,
    );
    if (rows.length === 0) return;
    const client = await pool.connect();
    try {
      await refreshSearchDocuments(client, rows, { tables, vault });
    } finally {
      client.release();
    }
    const last = rows[rows.length - 1];
    after = [last.tenantId, last.conversationId, last.runId, last.pairKey];
  }
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
