import type { Pool } from 'pg';
import {
  CheckpointedProjection,
  conversationKeyString,
  EventStore,
  GlobalPosition,
  keysTouchedBy,
  type PayloadVault,
  RecordedToolEvent,
  TokenCounter,
} from '@toolhistory/domain';
import { o200kTokens } from '@toolhistory/tokenizer';
import { applyPastCheckpoint, readCheckpoint, skipFailedEvent } from './postgres-projection-checkpoints';
import { refreshSearchDocuments } from './postgres-search-documents';
import { READ_MODEL_PROJECTION } from './postgres-read-model-rebuild';
import { applyRecordedEvents, LIVE_READ_MODEL } from './postgres-read-model-writer';
import { keepTraceContexts } from './postgres-external-event-traces';

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
    private readonly tokens: TokenCounter = o200kTokens,
    /** Opens sealed payloads for the search documents (docs/adr/033); the events come opened from `events`. */
    private readonly vault: PayloadVault | null = null,
  ) {}

  checkpoint(): Promise<GlobalPosition> {
    return readCheckpoint(this.pool, READ_MODEL_PROJECTION);
  }

  apply(recorded: readonly RecordedToolEvent[]): Promise<void> {
    return applyPastCheckpoint(this.pool, READ_MODEL_PROJECTION, recorded, async (client, fresh) => {
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
      const applied = fresh.filter((r) => !gone.has(conversationKeyString(r.event)));
      await applyRecordedEvents(client, applied, LIVE_READ_MODEL, this.events, 'row', this.tokens);
      await keepTraceContexts(client, applied);
      // Off the recorder's path already: the documents follow in the same transaction (see PostgresSearchProjection).
      await refreshSearchDocuments(client, keysTouchedBy(applied.map((r) => r.event)).invocations, {
        vault: this.vault,
        nowMs: Date.now(),
      });
    });
  }

  skip(event: RecordedToolEvent, failure: { code: string; reason: string }): Promise<void> {
    return skipFailedEvent(this.pool, READ_MODEL_PROJECTION, event, failure);
  }
}
