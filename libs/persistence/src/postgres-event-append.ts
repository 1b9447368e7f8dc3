import type { PoolClient } from 'pg';
import type { StoredToolEvent } from '@toolhistory/contract';
import { conversationKeyString, isInvocationEvent, pairKeyOf } from '@toolhistory/domain';
import { ColumnSpec, recordsetSelect, unnestRows } from './sql-rows';

/**
 * The append path of the PostgreSQL event store, shared by the recorder's
 * batch transaction and the EventStore adapter, so both number and insert
 * events the same way.
 */
export interface PositionedEvent {
  /** Written as it is, in its own schema version (readers upcast it). */
  event: StoredToolEvent;
  streamPosition: number;
  globalPosition: string;
  /** The producer's W3C trace context, stored beside the event. */
  traceparent?: string;
}

/** Subscribers in this schema are woken by this notification (payload: the schema). */
export const APPENDED_CHANNEL = 'toolhistory_events_appended';

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
  { name: 'payload', sqlType: 'json', value: (r) => r.event },
  { name: 'traceparent', sqlType: 'text', value: (r) => r.traceparent ?? null },
  // What the search projections follow (PostgresEventKeys), so they never read the payload.
  { name: 'pair_key', sqlType: 'text', value: (r) => (isInvocationEvent(r.event) ? pairKeyOf(r.event) : null) },
];

/** Drops events already in the store, and repeats of one eventId within the list. */
export async function withoutRecordedEvents<T>(
  client: PoolClient,
  items: readonly T[],
  eventOf: (item: T) => StoredToolEvent,
): Promise<T[]> {
  if (items.length === 0) return [];
  const ids = items.map((item) => eventOf(item).eventId.toLowerCase());
  const { rows } = await client.query<{ event_id: string }>('SELECT event_id FROM events WHERE event_id = ANY($1::uuid[])', [ids]);
  const seen = new Set(rows.map((r) => r.event_id));
  const out: T[] = [];
  items.forEach((item, i) => {
    if (seen.has(ids[i])) return;
    seen.add(ids[i]);
    out.push(item);
  });
  return out;
}

/**
 * Bumps each touched stream's version (row-locking it) and numbers the
 * events within their streams. The stream row is also the tombstone of an
 * erased conversation: its events are dropped here, under the same lock
 * that erasure takes, so an erase and a redelivery cannot interleave.
 */
export async function allocateStreamPositions(
  client: PoolClient,
  events: readonly StoredToolEvent[],
): Promise<{ positioned: PositionedEvent[]; erased: number }> {
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
 * Take it last in a transaction: it serializes every writer of the schema.
 */
export async function insertEvents(client: PoolClient, positioned: PositionedEvent[]): Promise<void> {
  if (positioned.length === 0) return;
  await client.query(`SELECT pg_advisory_xact_lock(hashtext(current_schema() || '.append'))`);
  const first = await client.query<{ first: string }>(
    `SELECT setval('events_global_position_seq', nextval('events_global_position_seq') + $1 - 1) - $1 + 1 AS first`,
    [positioned.length],
  );
  const firstGlobal = BigInt(first.rows[0].first);
  positioned.forEach((p, i) => (p.globalPosition = String(firstGlobal + BigInt(i))));
  const insert = recordsetSelect(EVENT_COLUMNS, positioned);
  await client.query(`INSERT INTO events (${insert.columnList}) ${insert.select}`, [insert.value]);
  // Delivered at commit; one per transaction, whatever the batch size.
  await client.query(`SELECT pg_notify('${APPENDED_CHANNEL}', current_schema())`);
}
