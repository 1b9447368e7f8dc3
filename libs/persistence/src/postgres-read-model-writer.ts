import type { PoolClient } from 'pg';
import type { StoredToolEvent, ToolEvent, ToolResultReceived } from '@toolhistory/contract';
import {
  awaitedCallLookups,
  conversationKeyString,
  EventStore,
  projectEvents,
  RecordedToolEvent,
  resultsAwaitingTheirCall,
  withRecordedResult,
  ConversationRow,
  invocationKeyString,
  InvocationRow,
  keysTouchedBy,
  ModelResponseRow,
  responseKeyString,
  ReadModelChanges,
  ReadModelState,
  runKeyString,
  RunRow,
  TokenCounter,
} from '@toolhistory/domain';
import {
  CONVERSATION_COLUMNS,
  invocationColumns,
  InvocationPayloads,
  RESPONSE_COLUMNS,
  RUN_COLUMNS,
  SELECT_CONVERSATION,
  SELECT_INVOCATION,
  SELECT_RESPONSE,
  SELECT_RUN,
} from './read-model-tables';
import { notifyConversationsChanged } from './postgres-conversation-changes';
import { upsertSql } from './sql-rows';

/** Where a read model lives: the live tables, or the fresh ones a rebuild fills. */
export interface ReadModelTableNames {
  conversations: string;
  runs: string;
  invocations: string;
  responses: string;
}

export const LIVE_READ_MODEL: ReadModelTableNames = {
  conversations: 'conversations',
  runs: 'runs',
  invocations: 'invocations',
  responses: 'model_responses',
};

const fromTable = (select: string, live: string, table: string): string =>
  table === live ? select : select.replace(new RegExp(`FROM ${live}$`), `FROM ${table}`);

/** The current rows of every key the events touch, in three queries. */
export async function loadReadModelState(
  client: PoolClient,
  events: readonly StoredToolEvent[],
  tables: ReadModelTableNames = LIVE_READ_MODEL,
): Promise<ReadModelState> {
  const keys = keysTouchedBy(events);
  // One connection runs one query at a time; these three are sequential.
  const conversations = await loadRows<ConversationRow>(
    client,
    fromTable(SELECT_CONVERSATION, 'conversations', tables.conversations),
    ['tenant_id', 'conversation_id'],
    keys.conversations.map((k) => [k.tenantId, k.conversationId]),
  );
  const runs = await loadRows<RunRow>(
    client,
    fromTable(SELECT_RUN, 'runs', tables.runs),
    ['tenant_id', 'conversation_id', 'run_id'],
    keys.runs.map((k) => [k.tenantId, k.conversationId, k.runId]),
  );
  const invocations = await loadRows<InvocationRow>(
    client,
    fromTable(SELECT_INVOCATION, 'invocations', tables.invocations),
    ['tenant_id', 'conversation_id', 'run_id', 'pair_key'],
    keys.invocations.map((k) => [k.tenantId, k.conversationId, k.runId, k.pairKey]),
  );
  const responses = await loadRows<ModelResponseRow>(
    client,
    fromTable(SELECT_RESPONSE, 'model_responses', tables.responses),
    // Keys travel as text arrays: the round index compared as text.
    ['tenant_id', 'conversation_id', 'run_id', 'round_index::text'],
    keys.responses.map((k) => [k.tenantId, k.conversationId, k.runId, String(k.roundIndex)]),
  );
  const rows = new Map(invocations.map((r) => [invocationKeyString(r), { ...r, result: r.result === null ? undefined : r.result }]));
  // Decisions and results a later run records for an earlier run's call that awaits approval (cross-run-pairing.ts).
  const lookups = awaitedCallLookups(events, rows);
  if (lookups.length > 0) {
    const awaiting = await loadRows<InvocationRow>(
      client,
      `${fromTable(SELECT_INVOCATION, 'invocations', tables.invocations)}`,
      ['tenant_id', 'conversation_id', 'tool_call_id'],
      lookups.map((k) => [k.tenantId, k.conversationId, k.toolCallId]),
      'approval_requested_at IS NOT NULL',
    );
    for (const r of awaiting) rows.set(invocationKeyString(r), { ...r, result: r.result === null ? undefined : r.result });
  }
  return {
    conversations: new Map(conversations.map((r) => [conversationKeyString(r), r])),
    runs: new Map(runs.map((r) => [runKeyString(r), r])),
    invocations: rows,
    responses: new Map(responses.map((r) => [responseKeyString(r), r])),
  };
}

/** Upserts every changed row, one statement per table; readers that cache the live tables hear of it at commit. */
export async function writeReadModelChanges(
  client: PoolClient,
  changes: ReadModelChanges,
  payloads: InvocationPayloads,
  tables: ReadModelTableNames = LIVE_READ_MODEL,
): Promise<void> {
  const statements: Array<[number, { text: string; values: unknown[] }]> = [
    [
      changes.conversations.length,
      upsertSql(tables.conversations, CONVERSATION_COLUMNS, ['tenant_id', 'conversation_id'], changes.conversations),
    ],
    [changes.runs.length, upsertSql(tables.runs, RUN_COLUMNS, ['tenant_id', 'conversation_id', 'run_id'], changes.runs)],
    [
      changes.invocations.length,
      upsertSql(
        tables.invocations,
        invocationColumns(payloads),
        ['tenant_id', 'conversation_id', 'run_id', 'pair_key'],
        changes.invocations,
      ),
    ],
    [
      changes.responses.length,
      upsertSql(tables.responses, RESPONSE_COLUMNS, ['tenant_id', 'conversation_id', 'run_id', 'round_index'], changes.responses),
    ],
  ];
  for (const [rowCount, s] of statements) if (rowCount > 0) await client.query(s.text, s.values);
  // Every change of a conversation's rows counts one of its events, so the conversations list names them all.
  if (tables === LIVE_READ_MODEL) await notifyConversationsChanged(client, changes.conversations);
}

/**
 * Projects recorded events (global order) into the given tables, in the
 * caller's transaction: what a rebuild and the checkpointed projector do.
 */
export async function applyRecordedEvents(
  client: PoolClient,
  recorded: readonly RecordedToolEvent[],
  tables: ReadModelTableNames,
  store: EventStore,
  payloads: InvocationPayloads,
  tokens: TokenCounter,
): Promise<void> {
  if (recorded.length === 0) return;
  const events = recorded.map((r) => r.event);
  const state = await loadReadModelState(client, events, tables);
  await takeRecordedResults(state, events, store, tokens);
  await writeReadModelChanges(client, projectEvents(state, events, tokens), payloads, tables);
}

/** A result rewritten (re-redacted) after the row was built from it: the stored version wins. */
async function takeRecordedResults(
  state: ReadModelState,
  events: readonly ToolEvent[],
  store: EventStore,
  tokens: TokenCounter,
): Promise<void> {
  const waiting = resultsAwaitingTheirCall(state, events);
  if (waiting.size === 0) return;
  const streams = new Map<string, ToolEvent>();
  for (const e of events) if (e.type === 'ToolCallRequested') streams.set(conversationKeyString(e), e);
  for (const call of streams.values()) {
    for (const { event } of await store.readStream(call)) {
      const entry = waiting.get(event.eventId.toLowerCase());
      if (entry && event.type === 'ToolResultReceived')
        state.invocations.set(entry.key, withRecordedResult(entry.row, event as ToolResultReceived, tokens));
    }
  }
}

/** Loads the rows whose composite keys are given, in one query. */
async function loadRows<Row>(
  client: PoolClient,
  select: string,
  keyColumns: string[],
  keys: string[][],
  condition?: string,
): Promise<Row[]> {
  if (keys.length === 0) return [];
  const params = keyColumns.map((_, i) => `$${i + 1}::text[]`).join(', ');
  const text = `${select} WHERE (${keyColumns.join(', ')}) IN (SELECT * FROM unnest(${params}))${condition === undefined ? '' : ` AND ${condition}`}`;
  const values = keyColumns.map((_, i) => keys.map((k) => k[i]));
  const { rows } = await client.query<Row & Record<string, unknown>>(text, values);
  return rows;
}
