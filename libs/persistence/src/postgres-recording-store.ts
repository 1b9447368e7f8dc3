import type { Pool, PoolClient } from 'pg';
import type { ToolEvent } from '@toolhistory/contract';
import {
  conversationKeyString,
  ConversationRow,
  invocationKeyString,
  InvocationRow,
  keysTouchedBy,
  Offset,
  OffsetEvent,
  projectEvents,
  RecordBatchCommand,
  RecordBatchOutcome,
  RecordingStore,
  runKeyString,
  RunRow,
} from '@toolhistory/domain';
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
  constructor(private readonly pool: Pool) {}

  async recordBatch(command: RecordBatchCommand): Promise<RecordBatchOutcome> {
    let client: PoolClient | undefined;
    try {
      client = await this.pool.connect();
      await client.query('BEGIN');
      const outcome = await this.recordInTransaction(client, command);
      await client.query('COMMIT');
      return outcome;
    } catch (error) {
      if (client) await client.query('ROLLBACK').catch(() => undefined);
      throw classifyPostgresError(error);
    } finally {
      // A connection that failed mid-transaction is not trusted again.
      client?.release();
    }
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
      return { appended: 0, duplicates: 0, alreadyCommitted };
    }

    const newEvents = await this.withoutRecordedEvents(client, fresh);
    const duplicates = fresh.length - newEvents.length;
    const positioned = newEvents.length > 0 ? await this.allocateStreamPositions(client, newEvents) : [];
    if (newEvents.length > 0) await this.projectIntoReadModel(client, newEvents);

    await client.query(
      `UPDATE consumer_offsets SET next_offset = $4, updated_at = now()
       WHERE group_id = $1 AND topic = $2 AND partition = $3`,
      [command.consumerGroup, command.topic, command.partition, command.nextOffset],
    );
    // Last, so the append lock is held only for the insert and the commit.
    if (positioned.length > 0) await this.appendEvents(client, positioned);
    return { appended: newEvents.length, duplicates, alreadyCommitted };
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

  /** Bumps each touched stream's version (row-locking it) and numbers the events within their streams. */
  private async allocateStreamPositions(client: PoolClient, events: readonly ToolEvent[]): Promise<PositionedEvent[]> {
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
    const versions = await client.query<{ tenant_id: string; conversation_id: string; version: number }>(
      `INSERT INTO streams (${bump.columnList}) ${bump.select}
       ON CONFLICT (tenant_id, conversation_id) DO UPDATE SET version = streams.version + EXCLUDED.version
       RETURNING tenant_id, conversation_id, version`,
      bump.values,
    );
    // First position of this batch per stream = new version - events appended in this batch + 1.
    const nextPosition = new Map<string, number>();
    for (const row of versions.rows) {
      const key = conversationKeyString({ tenantId: row.tenant_id, conversationId: row.conversation_id });
      nextPosition.set(key, row.version - perStream.get(key)!.count + 1);
    }
    return events.map((event) => {
      const key = conversationKeyString(event);
      const streamPosition = nextPosition.get(key)!;
      nextPosition.set(key, streamPosition + 1);
      return { event, streamPosition, globalPosition: '' };
    });
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

  private async projectIntoReadModel(client: PoolClient, events: readonly ToolEvent[]): Promise<void> {
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
    const changes = projectEvents(
      {
        conversations: new Map(conversations.map((r) => [conversationKeyString(r), r])),
        runs: new Map(runs.map((r) => [runKeyString(r), r])),
        invocations: new Map(
          invocations.map((r) => [invocationKeyString(r), { ...r, result: r.result === null ? undefined : r.result }]),
        ),
      },
      events,
    );
    const statements = [
      upsertSql('conversations', CONVERSATION_COLUMNS, ['tenant_id', 'conversation_id'], changes.conversations),
      upsertSql('runs', RUN_COLUMNS, ['tenant_id', 'conversation_id', 'run_id'], changes.runs),
      upsertSql('invocations', INVOCATION_COLUMNS, ['tenant_id', 'conversation_id', 'run_id', 'pair_key'], changes.invocations),
    ];
    for (const [i, s] of statements.entries()) {
      const rowCount = [changes.conversations, changes.runs, changes.invocations][i].length;
      if (rowCount > 0) await client.query(s.text, s.values);
    }
  }
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
