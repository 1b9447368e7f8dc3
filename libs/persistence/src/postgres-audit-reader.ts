import type { Pool } from 'pg';
import type {
  PayloadVault,
  UsageRow,
  AuditReader,
  InvocationCursor,
  InvocationFilter,
  InvocationRecord,
  SearchHit,
  SearchHitField,
  SearchQuery,
  StoredRun,
  UsageQuery,
  UsageReport,
} from '@toolhistory/domain';
import { substringSnippet } from '@toolhistory/domain';
import { containsPattern } from './like-pattern';
import { classifyPostgresError } from './postgres-errors';
import { type PostgresQueryCanceller, UNCANCELLABLE } from './postgres-query-canceller';
import { FORKED_FROM_SQL, invocationArgumentsSql, invocationResultSql, invocationSealsSql } from './read-model-tables';
import { openInvocationPayloads } from './sealed-rows';
import { isoText } from './sql-rows';

const ARGUMENTS = invocationArgumentsSql('invocations');
const RESULT = invocationResultSql('invocations');
/**
 * The trace the producer sent with the call (else with the result): the trace id of its W3C traceparent,
 * kept in `events` or, for events in another store, in `external_event_traces`.
 */
const TRACE_ID = `(SELECT split_part(t.traceparent, '-', 2) FROM (
    SELECT e.event_id, e.traceparent FROM events e
    WHERE e.event_id IN (invocations.call_event_id, invocations.result_event_id) AND e.traceparent IS NOT NULL
    UNION ALL
    SELECT x.event_id, x.traceparent FROM external_event_traces x
    WHERE x.event_id IN (invocations.call_event_id, invocations.result_event_id)
  ) t ORDER BY t.event_id = invocations.call_event_id DESC LIMIT 1)`;

/** The size of the reasoning recorded with the call's round (never its content): 0 without a response. */
const REASONING_BYTES = `coalesce((SELECT m.reasoning_bytes FROM model_responses m
  WHERE m.tenant_id = invocations.tenant_id AND m.conversation_id = invocations.conversation_id
    AND m.run_id = invocations.run_id AND m.round_index = invocations.round_index), 0)`;

const STATUS_CONDITION = {
  pending: 'result_event_id IS NULL',
  succeeded: 'result_event_id IS NOT NULL AND NOT coalesce(is_error, false)',
  error: 'result_event_id IS NOT NULL AND coalesce(is_error, false)',
} as const;

const RECORD_COLUMNS = `tenant_id AS "tenantId", conversation_id AS "conversationId", run_id AS "runId", pair_key AS "pairKey",
  round_index AS "roundIndex", sequence_index AS "sequenceIndex", tool_call_id AS "toolCallId", tool_name AS "toolName",
  ${ARGUMENTS} AS arguments, ${RESULT} AS result, is_error AS "isError", ${isoText('requested_at')} AS "requestedAt", ${isoText('completed_at')} AS "completedAt",
  ${isoText('at')} AS at, (extract(epoch FROM completed_at - requested_at) * 1000)::float8 AS "durationMs",
  persist, producer_redacted AS "producerRedacted", argument_redactions AS "argumentRedactions", result_redactions AS "resultRedactions", ${TRACE_ID} AS "traceId",
  arguments_bytes AS "argumentsBytes", result_bytes AS "resultBytes", ${isoText('approval_requested_at')} AS "approvalRequestedAt",
  approval_request_reason AS "approvalRequestReason", ${isoText('approval_decided_at')} AS "approvalDecidedAt", approved,
  approval_decided_by AS "approvalDecidedBy", approval_decision_reason AS "approvalDecisionReason", result_run_id AS "resultRunId",
  ${FORKED_FROM_SQL} AS "forkedFrom", ${invocationSealsSql('invocations')} AS "payloadSeals", expired_payloads AS "expiredPayloads",
  ${REASONING_BYTES} AS "reasoningBytes"`;

/** An invocation as ListToolInvocations answers it (also what WatchConversation shows). */
export const SELECT_RECORD = `SELECT ${RECORD_COLUMNS} FROM invocations`;

/*
 * Full-text search (docs/adr/006-full-text-search.md, docs/adr/011-search-projection.md).
 * The documents are the rows of invocation_search that the search projection
 * writes with invocation_search_document (migration 009); these expressions
 * must cut text into words the same way it does.
 */
// The query gets the space after each '/' that invocation_search_text gives documents.
const SEARCH_QUERY = `websearch_to_tsquery('simple', replace($2, '/', '/ '))`;
// ts_rank: where words matched (tool name > arguments > result, the weights of the document),
// how often, and for 'a b' how close together; divided by 1 + log(length) so a long output
// mentioning a word does not outrank a short exact match (1); mapped into [0, 1) (32).
const SEARCH_SCORE = `ts_rank(document, ${SEARCH_QUERY}, 1 | 32)::float8`;
// Best first; equal scores newest first, then by key: the same rows always come in the same order.
const SEARCH_ORDER = 'score DESC, matched_at DESC, conversation_id, run_id, pair_key';
/**
 * Ranking reads each match's whole document. A word in most of a tenant's
 * invocations ("error", "id") would have every one of them read; so only
 * the newest this many matches are ranked, which finding them costs a sort
 * on time rather than a read of each document.
 */
export const SEARCH_RANKING_BOUND = 1_000;
// The text the document was made of, highlighted; then the '/ ' spacing undone and made one line. Made from
// payloads in clear, opened here when they rest sealed: `t` holds each hit's tool name and payloads (hitTexts).
const SEARCH_SNIPPET = `btrim(regexp_replace(replace(ts_headline('simple',
    coalesce(t.tool_name, '') || E'\\n' || invocation_search_text(t.arguments) || E'\\n' || invocation_search_text(t.result),
    ${SEARCH_QUERY}, 'StartSel=**, StopSel=**, MaxWords=30, MinWords=10, ShortWord=0, MaxFragments=2, FragmentDelimiter=" … "'),
  '/ ', '/'), '\\s+', ' ', 'g'))`;
/** Each hit's tool name and payloads in clear, in order, as one JSON parameter ($1). */
const HIT_TEXTS = `ROWS FROM (json_to_recordset($1::json) AS (tool_name text, arguments json, result json))
  WITH ORDINALITY AS t(tool_name, arguments, result, n)`;

/**
 * Where the query matched, for words: fields (by their weight in the document:
 * tool name A, arguments B, result C) holding a word the query looks for.
 * A query can need words from several fields, so each field is asked for
 * any of them; words the query excludes (-word) are not among them.
 */
const QUERY_WORDS = `ARRAY(SELECT regexp_replace(m[1], '([''\\\\])\\1', '\\1', 'g')
  FROM regexp_matches(querytree(${SEARCH_QUERY})::text, '''((?:[^'']|'''')+)''', 'g') AS m)`;
const wordsIn = (weight: 'a' | 'b' | 'c') => `tsvector_to_array(ts_filter(document, '{${weight}}')) && ${QUERY_WORDS}`;
const WORDS_MATCHED_IN = `${wordsIn('a')} AS "inToolName", ${wordsIn('b')} AS "inArguments", ${wordsIn('c')} AS "inResult"`;

/*
 * Substring search (docs/adr/025-substring-search.md): $2 is a LIKE pattern
 * containing the literal text (containsPattern), matched by the trigram
 * index of invocation_substring.substring_text (migration 021); hits newest
 * first. Where it matched is the same test on each field's text, read again
 * with the same functions from the rows returned.
 */
const SUBSTRING_ORDER = 'matched_at DESC NULLS LAST, conversation_id, run_id, pair_key';

type HitRow = InvocationRecord & { score: number; snippet: string; inToolName: boolean; inArguments: boolean; inResult: boolean };
type WordHitRow = Omit<HitRow, 'snippet'>;
type SubstringHitRow = InvocationRecord & {
  argumentsText: string;
  resultText: string;
  inToolName: boolean;
  inArguments: boolean;
  inResult: boolean;
};

/** A hit's tool name and payloads in clear, as the SQL text functions read them (JSON text as received). */
const hitTexts = (rows: readonly InvocationRecord[]): string =>
  `[${rows.map((r) => `{"tool_name":${JSON.stringify(r.toolName ?? '')},"arguments":${JSON.stringify(r.arguments ?? null)},"result":${JSON.stringify(r.result ?? null)}}`).join(',')}]`;

const matchedInOf = (row: Pick<HitRow, 'inToolName' | 'inArguments' | 'inResult'>): SearchHitField[] =>
  (
    [
      ['toolName', row.inToolName],
      ['arguments', row.inArguments],
      ['result', row.inResult],
    ] as const
  )
    .filter(([, matched]) => matched)
    .map(([field]) => field);

const toHit = ({ score, snippet, inToolName, inArguments, inResult, ...record }: HitRow): SearchHit => ({
  invocation: { ...record, durationMs: record.durationMs === null ? null : Math.round(record.durationMs) },
  score,
  snippet,
  matchedIn: matchedInOf({ inToolName, inArguments, inResult }),
});

export class PostgresAuditReader implements AuditReader {
  private readonly canceller: Pick<PostgresQueryCanceller, 'query'>;

  constructor(
    private readonly pool: Pool,
    canceller?: PostgresQueryCanceller,
    /** Opens sealed payloads (encryption at rest); none: every payload read is in clear. */
    private readonly vault: PayloadVault | null = null,
  ) {
    this.canceller = canceller ?? UNCANCELLABLE;
  }

  async listInvocations(
    filter: InvocationFilter,
    after: InvocationCursor | null,
    limit: number,
    signal?: AbortSignal,
  ): Promise<InvocationRecord[]> {
    const conditions = ['tenant_id = $1', 'at IS NOT NULL'];
    const values: unknown[] = [filter.tenantId];
    const bind = (value: unknown) => `$${values.push(value)}`;
    if (filter.conversationId) conditions.push(`conversation_id = ${bind(filter.conversationId)}`);
    if (filter.runId) conditions.push(`run_id = ${bind(filter.runId)}`);
    if (filter.toolName) conditions.push(`tool_name = ${bind(filter.toolName)}`);
    if (filter.status) conditions.push(STATUS_CONDITION[filter.status]);
    if (filter.from) conditions.push(`at >= ${bind(filter.from)}::timestamptz`);
    if (filter.to) conditions.push(`at < ${bind(filter.to)}::timestamptz`);
    if (after) {
      conditions.push(
        `(at, conversation_id, run_id, round_index, sequence_index, pair_key) > (${bind(after.at)}::timestamptz, ${bind(after.conversationId)}, ${bind(after.runId)}, ${bind(after.roundIndex)}::integer, ${bind(after.sequenceIndex)}::integer, ${bind(after.pairKey)})`,
      );
    }
    // invocations.at, not the output column "at" (its text): only the column can walk the listing index.
    const text = `${SELECT_RECORD} WHERE ${conditions.join(' AND ')}
      ORDER BY invocations.at, conversation_id, run_id, round_index, sequence_index, pair_key LIMIT ${bind(limit)}`;
    try {
      const { rows } = await this.canceller.query<InvocationRecord>(this.pool, { text, values }, signal);
      const opened = await openInvocationPayloads(rows, this.vault);
      return opened.map((r) => ({ ...r, durationMs: r.durationMs === null ? null : Math.round(r.durationMs) }));
    } catch (error) {
      throw classifyPostgresError(error);
    }
  }

  async conversationRuns(tenantId: string, conversationId: string, signal?: AbortSignal): Promise<StoredRun[]> {
    try {
      const { rows } = await this.canceller.query<StoredRun>(
        this.pool,
        {
          text: `SELECT run_id AS "runId", status, ${isoText('started_at')} AS "startedAt", ${isoText('ended_at')} AS "endedAt",
                finish_reason AS "finishReason", error_code AS "errorCode", error_message AS "errorMessage"
         FROM runs WHERE tenant_id = $1 AND conversation_id = $2 ORDER BY started_at, run_id`,
          values: [tenantId, conversationId],
        },
        signal,
      );
      return rows;
    } catch (error) {
      throw classifyPostgresError(error);
    }
  }

  async usage(query: UsageQuery, signal?: AbortSignal): Promise<UsageReport> {
    const values = [query.tenantId, query.from, query.to, query.bucket];
    try {
      const rows = await this.canceller.query<UsageRow & { p50DurationMs: number | null; p95DurationMs: number | null }>(
        this.pool,
        {
          text: `SELECT ${isoText("date_trunc($4, at, 'UTC')")} AS "bucketStart", tool_name AS "toolName",
                count(*)::int AS calls, (count(*) FILTER (WHERE is_error))::int AS errors,
                percentile_cont(0.5) WITHIN GROUP (ORDER BY extract(epoch FROM completed_at - requested_at) * 1000) AS "p50DurationMs",
                percentile_cont(0.95) WITHIN GROUP (ORDER BY extract(epoch FROM completed_at - requested_at) * 1000) AS "p95DurationMs"
         FROM invocations
         WHERE tenant_id = $1 AND at >= $2::timestamptz AND at < $3::timestamptz AND tool_name IS NOT NULL
         GROUP BY 1, 2 ORDER BY 1, 2`,
          values,
        },
        signal,
      );
      const tokens = await this.canceller.query<{ input: string; output: string }>(
        this.pool,
        {
          text: `SELECT coalesce(sum(input_tokens), 0) AS input, coalesce(sum(output_tokens), 0) AS output
         FROM runs WHERE tenant_id = $1 AND ended_at >= $2::timestamptz AND ended_at < $3::timestamptz`,
          values: values.slice(0, 3),
        },
        signal,
      );
      const round = (v: unknown) => (v === null ? null : Math.round(Number(v)));
      return {
        rows: rows.rows.map((r) => ({ ...r, p50DurationMs: round(r.p50DurationMs), p95DurationMs: round(r.p95DurationMs) })),
        inputTokens: Number(tokens.rows[0].input),
        outputTokens: Number(tokens.rows[0].output),
      };
    } catch (error) {
      throw classifyPostgresError(error);
    }
  }

  searchInvocations(query: SearchQuery, signal?: AbortSignal): Promise<SearchHit[]> {
    switch (query.match) {
      case 'words':
        return this.searchWords(query, signal);
      case 'substring':
        return this.searchSubstring(query, signal);
    }
  }

  private async searchWords(query: SearchQuery, signal?: AbortSignal): Promise<SearchHit[]> {
    const conditions = ['tenant_id = $1', `document @@ ${SEARCH_QUERY}`];
    const values: unknown[] = [query.tenantId, query.query];
    const bind = (value: unknown) => `$${values.push(value)}`;
    if (query.conversationId) conditions.push(`conversation_id = ${bind(query.conversationId)}`);
    if (query.from) conditions.push(`at >= ${bind(query.from)}::timestamptz`);
    if (query.to) conditions.push(`at < ${bind(query.to)}::timestamptz`);
    // Matches and ranks from the search table alone; only the rows returned are read from
    // invocations and get a snippet (ts_headline re-reads the whole text).
    const text = `WITH matches AS (
        SELECT tenant_id, conversation_id, run_id, pair_key, at AS matched_at, document FROM invocation_search
        WHERE ${conditions.join(' AND ')} ORDER BY at DESC NULLS LAST LIMIT ${SEARCH_RANKING_BOUND}),
      ranked AS (
        SELECT tenant_id, conversation_id, run_id, pair_key, matched_at, document, ${SEARCH_SCORE} AS score FROM matches
        ORDER BY ${SEARCH_ORDER} LIMIT ${bind(query.limit)})
      SELECT ${RECORD_COLUMNS}, score, ${WORDS_MATCHED_IN}
      FROM ranked JOIN invocations USING (tenant_id, conversation_id, run_id, pair_key)
      ORDER BY ${SEARCH_ORDER}`;
    try {
      const { rows } = await this.canceller.query<WordHitRow>(this.pool, { text, values }, signal);
      const opened = await openInvocationPayloads(rows, this.vault);
      if (opened.length === 0) return [];
      // The snippets, from the payloads in clear: one more round trip, for the hits returned only.
      const snippets = await this.canceller.query<{ snippet: string }>(
        this.pool,
        { text: `SELECT ${SEARCH_SNIPPET} AS snippet FROM ${HIT_TEXTS} ORDER BY t.n`, values: [hitTexts(opened), query.query] },
        signal,
      );
      return opened.map((row, i) => toHit({ ...row, snippet: snippets.rows[i].snippet }));
    } catch (error) {
      throw classifyPostgresError(error);
    }
  }

  private async searchSubstring(query: SearchQuery, signal?: AbortSignal): Promise<SearchHit[]> {
    const values: unknown[] = [query.tenantId, containsPattern(query.query)];
    const conditions = ['tenant_id = $1', 'substring_text ILIKE $2'];
    const bind = (value: unknown) => `$${values.push(value)}`;
    if (query.conversationId) conditions.push(`conversation_id = ${bind(query.conversationId)}`);
    if (query.from) conditions.push(`at >= ${bind(query.from)}::timestamptz`);
    if (query.to) conditions.push(`at < ${bind(query.to)}::timestamptz`);
    const text = `WITH matches AS (
        SELECT tenant_id, conversation_id, run_id, pair_key, at AS matched_at FROM invocation_substring
        WHERE ${conditions.join(' AND ')} ORDER BY ${SUBSTRING_ORDER} LIMIT ${bind(query.limit)})
      SELECT ${RECORD_COLUMNS}, matched_at FROM matches JOIN invocations USING (tenant_id, conversation_id, run_id, pair_key)
      ORDER BY matched_at DESC NULLS LAST, conversation_id, run_id, pair_key`;
    try {
      const { rows: found } = await this.canceller.query<InvocationRecord & { matched_at: unknown }>(this.pool, { text, values }, signal);
      const opened = await openInvocationPayloads(found, this.vault);
      if (opened.length === 0) return [];
      // Where it matched, on the payloads in clear (opened here when sealed), with the same functions as the index's text.
      const fields = await this.canceller.query<{
        argumentsText: string;
        resultText: string;
        inToolName: boolean;
        inArguments: boolean;
        inResult: boolean;
      }>(
        this.pool,
        {
          text: `SELECT invocation_substring_text(t.arguments) AS "argumentsText", invocation_substring_text(t.result) AS "resultText",
              t.tool_name ILIKE $2 AS "inToolName", invocation_substring_text(t.arguments) ILIKE $2 AS "inArguments",
              invocation_substring_text(t.result) ILIKE $2 AS "inResult"
            FROM ${HIT_TEXTS} ORDER BY t.n`,
          values: [hitTexts(opened), containsPattern(query.query)],
        },
        signal,
      );
      const rows: Array<SubstringHitRow & { matched_at: unknown }> = opened.map((row, i) => ({ ...row, ...fields.rows[i] }));
      return (
        rows
          // A row changed since the search table was written (the projection follows it) may no longer hold the text.
          .filter((row) => row.inToolName || row.inArguments || row.inResult)
          .map(({ argumentsText, resultText, matched_at: _matchedAt, ...row }) => {
            const texts = [
              row.inToolName ? (row.toolName ?? '') : null,
              row.inArguments ? argumentsText : null,
              row.inResult ? resultText : null,
            ];
            return toHit({
              ...row,
              score: 0,
              snippet: substringSnippet(
                texts.filter((t): t is string => t !== null),
                query.query,
              ),
            });
          })
      );
    } catch (error) {
      throw classifyPostgresError(error);
    }
  }
}
