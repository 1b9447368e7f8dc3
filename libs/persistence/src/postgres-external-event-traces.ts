import type { PoolClient } from 'pg';
import type { RecordedToolEvent } from '@toolhistory/domain';

/**
 * The trace contexts of events read from another event store (EventStoreDB
 * keeps them in each event's metadata), kept for audit listings by the
 * projection and the rebuild that follow that store. Events this database
 * holds itself keep theirs in `events.traceparent` and are skipped, so a
 * store standing in through the port writes nothing twice.
 */
export async function keepTraceContexts(client: PoolClient, recorded: readonly RecordedToolEvent[]): Promise<void> {
  const traced = recorded.filter((r) => r.traceparent !== undefined);
  if (traced.length === 0) return;
  await client.query(
    `INSERT INTO external_event_traces (event_id, tenant_id, conversation_id, traceparent)
     SELECT t.event_id, t.tenant_id, t.conversation_id, t.traceparent
     FROM unnest($1::uuid[], $2::text[], $3::text[], $4::text[]) AS t(event_id, tenant_id, conversation_id, traceparent)
     WHERE NOT EXISTS (SELECT 1 FROM events e WHERE e.event_id = t.event_id)
     ON CONFLICT (event_id) DO NOTHING`,
    [
      traced.map((r) => r.event.eventId),
      traced.map((r) => r.event.tenantId),
      traced.map((r) => r.event.conversationId),
      traced.map((r) => r.traceparent),
    ],
  );
}
