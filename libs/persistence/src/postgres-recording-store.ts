import type { Pool, PoolClient } from 'pg';
import { StoredToolEvent, ToolEvent, upcastToolEvent } from '@toolhistory/contract';
import {
  conversationKeyString,
  DEFAULT_REDACTION_POLICY,
  isInvocationEvent,
  pairKeyOf,
  ReadModelState,
  redactEarlyResult,
  RedactionPolicy,
  redactToolEvent,
  ConversationRow,
  invocationKeyString,
  InvocationRow,
  keysTouchedBy,
  Offset,
  OffsetEvent,
  projectEvents,
  ReadModelChanges,
  RecordBatchCommand,
  RecordBatchOutcome,
  RecordingStore,
  runKeyString,
  RunRow,
} from '@toolhistory/domain';
import { inTransaction } from './in-transaction';
import { classifyPostgresError } from './postgres-errors';
import {
  CONVERSATION_COLUMNS,
  INVOCATION_COLUMNS,
  RUN_COLUMNS,
  SELECT_CONVERSATION,
  SELECT_INVOCATION,
  SELECT_RUN,
} from './read-model-tables';
import { upsertSql } from './sql-rows';
import { allocateStreamPositions, insertEvents, withoutRecordedEvents } from './postgres-event-append';

/**
 * The PostgreSQL side of recording: one transaction per partition batch.
 * The partition's offset row is locked first (exact skipping of redelivered
 * messages); stream rows are locked per conversation; the global append lock
 * is taken last, only around allocating global positions and inserting.
 */
export class PostgresRecordingStore implements RecordingStore {
  constructor(
    private readonly pool: Pool,
    private readonly redaction: RedactionPolicy = DEFAULT_REDACTION_POLICY,
  ) {}

  recordBatch(command: RecordBatchCommand): Promise<RecordBatchOutcome> {
    return inTransaction(this.pool, (client) => this.recordInTransaction(client, command));
  }

  async committedOffsets(consumerGroup: string, topic: string): Promise<Map<number, Offset>> {
    try {
      const { rows } = await this.pool.query<{ partition: number; next_offset: string }>(
        'SELECT partition, next_offset FROM consumer_offsets WHERE group_id = $1 AND topic = $2',
        [consumerGroup, topic],
      );
      return new Map(rows.map((r) => [r.partition, r.next_offset]));
    } catch (error) {
      throw classifyPostgresError(error);
    }
  }

  private async recordInTransaction(client: PoolClient, command: RecordBatchCommand): Promise<RecordBatchOutcome> {
    // Locks this partition's offset row: a consumer that still holds the partition
    // after a rebalance waits here, then sees the new offset and skips the batch.
    const stored = await client.query<{ next_offset: string }>(
      `INSERT INTO consumer_offsets (group_id, topic, partition, next_offset) VALUES ($1, $2, $3, -1)
       ON CONFLICT (group_id, topic, partition) DO UPDATE SET next_offset = consumer_offsets.next_offset
       RETURNING next_offset`,
      [command.consumerGroup, command.topic, command.partition],
    );
    const committed = BigInt(stored.rows[0].next_offset);
    const fresh = command.events.filter((m) => BigInt(m.offset) >= committed);
    const alreadyCommitted = command.events.length - fresh.length;
    if (committed >= BigInt(command.nextOffset)) {
      return { appended: 0, duplicates: 0, alreadyCommitted, erased: 0 };
    }

    const newEvents = await withoutRecordedEvents(client, fresh, (m) => m.event);
    const duplicates = fresh.length - newEvents.length;
    const { positioned, erased } = newEvents.length > 0 ? await allocateStreamPositions(client, newEvents.map((m) => m.event)) : { positioned: [], erased: 0 };
    if (positioned.length > 0) {
      // Each event is stored in the schema version it was received in (a v1
      // event stays v1; readers upcast it), while the read model is built
      // from the current version. Redaction keeps an event's version (it
      // touches no field that differs between versions), so the payload
      // stored is the redacted event as received and the projection gets
      // that same event upcast.
      const current = positioned.map((p) => upcastToolEvent(p.event));
      const state = await this.loadReadModelState(client, current);
      // Redaction happens here, before anything of the batch is written.
      const toolNames = toolNamesByInvocation(state, current);
      positioned.forEach((p, i) => (p.event = redactToolEvent(p.event, this.redaction, toolNameFor(toolNames, current[i]))));
      const redacted = positioned.map((p) => upcastToolEvent(p.event));
      await this.redactEarlyResults(client, state, redacted);
      await this.writeReadModelChanges(client, projectEvents(state, redacted));
    }

    await client.query(
      `UPDATE consumer_offsets SET next_offset = $4, updated_at = now()
       WHERE group_id = $1 AND topic = $2 AND partition = $3`,
      [command.consumerGroup, command.topic, command.partition, command.nextOffset],
    );
    // Last, so the append lock is held only for the insert and the commit.
    await insertEvents(client, positioned);
    return { appended: positioned.length, duplicates, alreadyCommitted, erased };
  }

  private async loadReadModelState(client: PoolClient, events: readonly ToolEvent[]): Promise<ReadModelState> {
    const keys = keysTouchedBy(events);
    // One connection runs one query at a time; these three are sequential.
    const conversations = await loadRows<ConversationRow>(
      client,
      SELECT_CONVERSATION,
      ['tenant_id', 'conversation_id'],
      keys.conversations.map((k) => [k.tenantId, k.conversationId]),
    );
    const runs = await loadRows<RunRow>(
      client,
      SELECT_RUN,
      ['tenant_id', 'conversation_id', 'run_id'],
      keys.runs.map((k) => [k.tenantId, k.conversationId, k.runId]),
    );
    const invocations = await loadRows<InvocationRow>(
      client,
      SELECT_INVOCATION,
      ['tenant_id', 'conversation_id', 'run_id', 'pair_key'],
      keys.invocations.map((k) => [k.tenantId, k.conversationId, k.runId, k.pairKey]),
    );
    return {
      conversations: new Map(conversations.map((r) => [conversationKeyString(r), r])),
      runs: new Map(runs.map((r) => [runKeyString(r), r])),
      invocations: new Map(invocations.map((r) => [invocationKeyString(r), { ...r, result: r.result === null ? undefined : r.result }])),
    };
  }

  /**
   * Results recorded in an earlier batch than their call were redacted by
   * the default rule; the call now names the tool, so the stored result gets
   * the tool's rule, in the events table and in the row about to be updated.
   */
  private async redactEarlyResults(client: PoolClient, state: ReadModelState, events: readonly ToolEvent[]): Promise<void> {
    const waiting = new Map<string, { row: InvocationRow; toolName: string }>();
    for (const e of events) {
      if (e.type !== 'ToolCallRequested') continue;
      const row = state.invocations.get(invocationKeyString({ ...e, pairKey: pairKeyOf(e) }));
      if (row && row.callEventId === null && row.resultEventId !== null) waiting.set(row.resultEventId, { row, toolName: e.toolName });
    }
    if (waiting.size === 0) return;
    const { rows } = await client.query<{ payload: StoredToolEvent }>('SELECT payload FROM events WHERE event_id = ANY($1::uuid[])', [[...waiting.keys()]]);
    for (const { payload } of rows) {
      // The payload is in the version it was received in. A result has the
      // same shape in every supported version (the call below would not
      // compile otherwise), so it is redacted as stored and written back in
      // its own version: stored events are never rewritten to a newer one.
      if (payload.type !== 'ToolResultReceived') continue;
      const { row, toolName } = waiting.get(payload.eventId.toLowerCase())!;
      const redacted = redactEarlyResult(payload, this.redaction, toolName);
      if (redacted === null) continue;
      await client.query('UPDATE events SET payload = $2 WHERE event_id = $1', [payload.eventId, redacted]);
      Object.assign(row, { result: redacted.result, resultRedactions: redacted.redaction?.counts ?? {}, resultBytes: redacted.redaction?.originalBytes ?? null });
    }
  }

  private async writeReadModelChanges(client: PoolClient, changes: ReadModelChanges): Promise<void> {
    const statements: Array<[number, { text: string; values: unknown[] }]> = [
      [changes.conversations.length, upsertSql('conversations', CONVERSATION_COLUMNS, ['tenant_id', 'conversation_id'], changes.conversations)],
      [changes.runs.length, upsertSql('runs', RUN_COLUMNS, ['tenant_id', 'conversation_id', 'run_id'], changes.runs)],
      [changes.invocations.length, upsertSql('invocations', INVOCATION_COLUMNS, ['tenant_id', 'conversation_id', 'run_id', 'pair_key'], changes.invocations)],
    ];
    for (const [rowCount, s] of statements) if (rowCount > 0) await client.query(s.text, s.values);
  }
}

/** The tool of every invocation the batch touches: from the rows already recorded and from calls anywhere in the batch. */
function toolNamesByInvocation(state: ReadModelState, events: readonly ToolEvent[]): Map<string, string> {
  const names = new Map<string, string>();
  for (const [key, row] of state.invocations) if (row.toolName !== null) names.set(key, row.toolName);
  for (const e of events) if (e.type === 'ToolCallRequested') names.set(invocationKeyString({ ...e, pairKey: pairKeyOf(e) }), e.toolName);
  return names;
}

function toolNameFor(names: Map<string, string>, event: ToolEvent): string | null {
  if (!isInvocationEvent(event)) return null;
  return names.get(invocationKeyString({ ...event, pairKey: pairKeyOf(event) })) ?? null;
}

/** Loads the rows whose composite keys are given, in one query. */
async function loadRows<Row>(client: PoolClient, select: string, keyColumns: string[], keys: string[][]): Promise<Row[]> {
  if (keys.length === 0) return [];
  const params = keyColumns.map((_, i) => `$${i + 1}::text[]`).join(', ');
  const text = `${select} WHERE (${keyColumns.join(', ')}) IN (SELECT * FROM unnest(${params}))`;
  const values = keyColumns.map((_, i) => keys.map((k) => k[i]));
  const { rows } = await client.query<Row & Record<string, unknown>>(text, values);
  return rows;
}
