import type { Pool } from 'pg';
import {
  CheckpointedProjection,
  comparePositions,
  conversationKeyString,
  EventStore,
  GlobalPosition,
  RecordedToolEvent,
  START_POSITION,
} from '@toolhistory/domain';
import { inTransaction } from './in-transaction';
import { classifyPostgresError } from './postgres-errors';
import { READ_MODEL_PROJECTION } from './postgres-read-model-rebuild';
import { applyRecordedEvents, LIVE_READ_MODEL } from './postgres-read-model-writer';

/**
 * The live read model fed from an event store that is not PostgreSQL
 * (EventStoreDB): rows and checkpoint commit together. Each conversation's
 * row in `streams` is locked while its events are applied, the lock erasure
 * takes, so an erased conversation never comes back through a late batch.
 */
export class PostgresReadModelProjection implements CheckpointedProjection {
  constructor(
    private readonly pool: Pool,
    private readonly events: EventStore,
  ) {}

  async checkpoint(): Promise<GlobalPosition> {
    try {
      const { rows } = await this.pool.query<{ position: string }>(
        'SELECT position::text FROM projection_checkpoints WHERE projection = $1',
        [READ_MODEL_PROJECTION],
      );
      return rows[0]?.position ?? START_POSITION;
    } catch (error) {
      throw classifyPostgresError(error);
    }
  }

  apply(recorded: readonly RecordedToolEvent[]): Promise<void> {
    if (recorded.length === 0) return Promise.resolve();
    return inTransaction(this.pool, async (client) => {
      const { rows } = await client.query<{ position: string }>(
        `INSERT INTO projection_checkpoints (projection, position) VALUES ($1, 0)
         ON CONFLICT (projection) DO UPDATE SET position = projection_checkpoints.position
         RETURNING position::text`,
        [READ_MODEL_PROJECTION],
      );
      const checkpoint = rows[0].position;
      const fresh = recorded.filter((r) => comparePositions(r.globalPosition, checkpoint) > 0);
      if (fresh.length === 0) return;

      const streams = new Map<string, { tenantId: string; conversationId: string }>();
      for (const { event } of fresh)
        streams.set(conversationKeyString(event), { tenantId: event.tenantId, conversationId: event.conversationId });
      const ordered = [...streams.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, v]) => v);
      const locked = await client.query<{ tenant_id: string; conversation_id: string; erased: boolean }>(
        `INSERT INTO streams (tenant_id, conversation_id, version)
         SELECT tenant_id, conversation_id, 0 FROM unnest($1::text[], $2::text[]) AS u(tenant_id, conversation_id)
         ON CONFLICT (tenant_id, conversation_id) DO UPDATE SET version = streams.version
         RETURNING tenant_id, conversation_id, erased_at IS NOT NULL AS erased`,
        [ordered.map((s) => s.tenantId), ordered.map((s) => s.conversationId)],
      );
      const gone = new Set(
        locked.rows.filter((r) => r.erased).map((r) => conversationKeyString({ tenantId: r.tenant_id, conversationId: r.conversation_id })),
      );
      await applyRecordedEvents(
        client,
        fresh.filter((r) => !gone.has(conversationKeyString(r.event))),
        LIVE_READ_MODEL,
        this.events,
      );
      await client.query('UPDATE projection_checkpoints SET position = $2::numeric, updated_at = now() WHERE projection = $1', [
        READ_MODEL_PROJECTION,
        fresh[fresh.length - 1].globalPosition,
      ]);
    });
  }

  skip(event: RecordedToolEvent, failure: { code: string; reason: string }): Promise<void> {
    return inTransaction(this.pool, async (client) => {
      await client.query(
        `INSERT INTO projection_failures (projection, position, event_id, error_code, reason) VALUES ($1, $2::numeric, $3, $4, $5)
         ON CONFLICT (projection, position) DO NOTHING`,
        [READ_MODEL_PROJECTION, event.globalPosition, event.event.eventId, failure.code, failure.reason],
      );
      await client.query(
        `INSERT INTO projection_checkpoints (projection, position) VALUES ($1, $2::numeric)
         ON CONFLICT (projection) DO UPDATE SET position = greatest(projection_checkpoints.position, EXCLUDED.position), updated_at = now()`,
        [READ_MODEL_PROJECTION, event.globalPosition],
      );
    });
  }
}
