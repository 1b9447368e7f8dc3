import type { Pool, PoolClient } from 'pg';
import type { ToolEvent, ToolResultReceived } from '@toolhistory/contract';
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
import { ColumnSpec, recordsetSelect, unnestRows, upsertSql } from './sql-rows';

interface PositionedEvent {
  event: ToolEvent;
  streamPosition: number;
  globalPosition: string;
}

const EVENT_COLUMNS: ColumnSpec<PositionedEvent>[] = [
  { name: 'global_position', sqlType: 'int8', value: (r) => r.globalPosition },
  { name: 'event_id', sqlType: 'uuid', value: (r) => r.event.eventId },
  { name: 'tenant_id', sqlType: 'text', value: (r) => r.event.tenantId },
  { name: 'conversation_id', sqlType: 'text', value: (r) => r.event.conversationId },
  { name: 'stream_position', sqlType: 'int4', value: (r) => r.streamPosition },
  { name: 'run_id', sqlType: 'text', value: (r) => r.event.runId },
  { name: 'type', sqlType: 'text', value: (r) => r.event.type },
  { name: 'schema_version', sqlType: 'int4', value: (r) => r.event.schemaVersion },
  { name: 'occurred_at', sqlType: 'timestamptz', value: (r) => r.event.occurredAt },
  { name: 'payload', sqlType: 'jsonb', value: (r) => r.event },
];

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

    const newEvents = await this.withoutRecordedEvents(client, fresh);
    const duplicates = fresh.length - newEvents.length;
    const { positioned, erased } = newEvents.length > 0 ? await this.allocateStreamPositions(client, newEvents) : { positioned: [], erased: 0 };
    if (positioned.length > 0) {
      const received = positioned.map((p) => p.event);
      const state = await this.loadReadModelState(client, received);
      // Redaction happens here, before anything of the batch is written.
      const toolNames = toolNamesByInvocation(state, received);
      for (const p of positioned) p.event = redactToolEvent(p.event, this.redaction, toolNameFor(toolNames, p.event));
      const redacted = positioned.map((p) => p.event);
      await this.redactEarlyResults(client, state, redacted);
      await this.writeReadModelChanges(client, projectEvents(state, redacted));
    }

    await client.query(
      `UPDATE consumer_offsets SET next_offset = $4, updated_at = now()
       WHERE group_id = $1 AND topic = $2 AND partition = $3`,
      [command.consumerGroup, command.topic, command.partition, command.nextOffset],
    );
    // Last, so the append lock is held only for the insert and the commit.
    if (positioned.length > 0) await this.appendEvents(client, positioned);
    return { appended: positioned.length, duplicates, alreadyCommitted, erased };
  }

  /** Drops events already in the store, and repeats of one eventId within the batch. */
  private async withoutRecordedEvents(client: PoolClient, messages: readonly OffsetEvent[]): Promise<ToolEvent[]> {
    if (messages.length === 0) return [];
    const ids = messages.map((m) => m.event.eventId.toLowerCase());
    const { rows } = await client.query<{ event_id: string }>('SELECT event_id FROM events WHERE event_id = ANY($1::uuid[])', [ids]);
    const seen = new Set(rows.map((r) => r.event_id));
    const out: ToolEvent[] = [];
    messages.forEach((m, i) => {
      if (seen.has(ids[i])) return;
      seen.add(ids[i]);
      out.push(m.event);
    });
    return out;
  }

  /**
   * Bumps each touched stream's version (row-locking it) and numbers the
   * events within their streams. The stream row is also the tombstone of an
   * erased conversation: its events are dropped here, under the same lock
   * that erasure takes, so an erase and a redelivery cannot interleave.
   */
  private async allocateStreamPositions(client: PoolClient, events: readonly ToolEvent[]): Promise<{ positioned: PositionedEvent[]; erased: number }> {
    const perStream = new Map<string, { tenantId: string; conversationId: string; count: number }>();
    for (const e of events) {
      const key = conversationKeyString(e);
      const entry = perStream.get(key) ?? { tenantId: e.tenantId, conversationId: e.conversationId, count: 0 };
      entry.count += 1;
      perStream.set(key, entry);
    }
    // A fixed lock order keeps concurrent batches from deadlocking.
    const streams = [...perStream.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, v]) => v);
    const bump = unnestRows<(typeof streams)[number]>(
      [
        { name: 'tenant_id', sqlType: 'text', value: (s) => s.tenantId },
        { name: 'conversation_id', sqlType: 'text', value: (s) => s.conversationId },
        { name: 'version', sqlType: 'int4', value: (s) => s.count },
      ],
      streams,
    );
    const versions = await client.query<{ tenant_id: string; conversation_id: string; version: number; erased: boolean }>(
      `INSERT INTO streams (${bump.columnList}) ${bump.select}
       ON CONFLICT (tenant_id, conversation_id) DO UPDATE
         SET version = CASE WHEN streams.erased_at IS NULL THEN streams.version + EXCLUDED.version ELSE streams.version END
       RETURNING tenant_id, conversation_id, version, erased_at IS NOT NULL AS erased`,
      bump.values,
    );
    // First position of this batch per stream = new version - events appended in this batch + 1.
    const nextPosition = new Map<string, number>();
    for (const row of versions.rows) {
      const key = conversationKeyString({ tenantId: row.tenant_id, conversationId: row.conversation_id });
      if (!row.erased) nextPosition.set(key, row.version - perStream.get(key)!.count + 1);
    }
    const positioned: PositionedEvent[] = [];
    for (const event of events) {
      const key = conversationKeyString(event);
      const streamPosition = nextPosition.get(key);
      if (streamPosition === undefined) continue;
      nextPosition.set(key, streamPosition + 1);
      positioned.push({ event, streamPosition, globalPosition: '' });
    }
    return { positioned, erased: events.length - positioned.length };
  }

  /**
   * Global positions are allocated under the append lock, held until commit,
   * so they become visible in order (docs/adr/002-global-position-allocation.md).
   */
  private async appendEvents(client: PoolClient, positioned: PositionedEvent[]): Promise<void> {
    await client.query(`SELECT pg_advisory_xact_lock(hashtext(current_schema() || '.append'))`);
    const first = await client.query<{ first: string }>(
      `SELECT setval('events_global_position_seq', nextval('events_global_position_seq') + $1 - 1) - $1 + 1 AS first`,
      [positioned.length],
    );
    const firstGlobal = BigInt(first.rows[0].first);
    positioned.forEach((p, i) => (p.globalPosition = String(firstGlobal + BigInt(i))));
    const insert = recordsetSelect(EVENT_COLUMNS, positioned);
    await client.query(`INSERT INTO events (${insert.columnList}) ${insert.select}`, [insert.value]);
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
    const { rows } = await client.query<{ payload: ToolResultReceived }>('SELECT payload FROM events WHERE event_id = ANY($1::uuid[])', [[...waiting.keys()]]);
    for (const { payload } of rows) {
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
