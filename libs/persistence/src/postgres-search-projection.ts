import type { Pool } from 'pg';
import { CheckpointedProjection, GlobalPosition, invocationKeysTouchedBy, type PayloadVault, RecordedEventKeys } from '@toolhistory/domain';
import { applyPastCheckpoint, readCheckpoint, skipFailedEvent } from './postgres-projection-checkpoints';
import { lockConversationsForSearch, refreshSearchDocuments, SearchKind } from './postgres-search-documents';

/** The checkpoint of each search's projection: the last global position whose invocations have their documents. */
export const SEARCH_PROJECTIONS: Readonly<Record<SearchKind, string>> = { words: 'search', substring: 'substring' };
/** The events search documents are made of; the others never reach the projections. */
export const SEARCH_PROJECTION_TYPES = ['ToolCallRequested', 'ToolResultReceived'] as const;

/**
 * The documents of one search, written after the recorder's commit by
 * following the event store (events in PostgreSQL): each batch rewrites the
 * documents of the invocations its call and result events touched, from
 * their rows as they are now, and moves the checkpoint in the same
 * transaction. It takes the events' keys only (an EventKeyFeed: no payload
 * is read from events), and the rows' payloads are opened once, here. A burst of traffic makes search later, never recording
 * slower; each search has its own projection, so the costlier trigrams of
 * substring search never hold word search back.
 */
export class PostgresSearchProjection implements CheckpointedProjection<RecordedEventKeys> {
  private readonly checkpointName: string;

  constructor(
    private readonly pool: Pool,
    private readonly kind: SearchKind,
    /** Opens sealed payloads: documents are made of payloads in clear (docs/adr/033). */
    private readonly vault: PayloadVault | null = null,
  ) {
    this.checkpointName = SEARCH_PROJECTIONS[kind];
  }

  checkpoint(): Promise<GlobalPosition> {
    return readCheckpoint(this.pool, this.checkpointName);
  }

  apply(recorded: readonly RecordedEventKeys[]): Promise<void> {
    return applyPastCheckpoint(this.pool, this.checkpointName, recorded, async (client, fresh) => {
      const keys = invocationKeysTouchedBy(fresh.map((r) => r.event));
      await lockConversationsForSearch(client, keys.conversations, 'shared');
      // Taken under the lock the retention sweeper also takes: a payload expiring now is either swept after this, or left out here.
      await refreshSearchDocuments(client, keys.invocations, { kinds: [this.kind], vault: this.vault, nowMs: Date.now() });
    });
  }

  skip(event: RecordedEventKeys, failure: { code: string; reason: string }): Promise<void> {
    return skipFailedEvent(this.pool, this.checkpointName, event, failure);
  }
}
