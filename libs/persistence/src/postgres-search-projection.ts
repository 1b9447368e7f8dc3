import type { Pool } from 'pg';
import { CheckpointedProjection, GlobalPosition, keysTouchedBy, RecordedToolEvent } from '@toolhistory/domain';
import { applyPastCheckpoint, readCheckpoint, skipFailedEvent } from './postgres-projection-checkpoints';
import { lockConversationsForSearch, refreshSearchDocuments } from './postgres-search-documents';

/** The checkpoint of the search projection: the last global position whose invocations have their documents. */
export const SEARCH_PROJECTION = 'search';
/** The events search documents are made of; the others never reach the projection. */
export const SEARCH_PROJECTION_TYPES = ['ToolCallRequested', 'ToolResultReceived'] as const;

/**
 * Search documents, written after the recorder's commit by following the
 * event store (events in PostgreSQL): each batch rewrites the documents of
 * the invocations its call and result events touched, from their rows as
 * they are now, and moves the checkpoint in the same transaction. A burst
 * of traffic makes search later, never recording slower.
 */
export class PostgresSearchProjection implements CheckpointedProjection {
  constructor(private readonly pool: Pool) {}

  checkpoint(): Promise<GlobalPosition> {
    return readCheckpoint(this.pool, SEARCH_PROJECTION);
  }

  apply(recorded: readonly RecordedToolEvent[]): Promise<void> {
    return applyPastCheckpoint(this.pool, SEARCH_PROJECTION, recorded, async (client, fresh) => {
      const keys = keysTouchedBy(fresh.map((r) => r.event));
      await lockConversationsForSearch(client, keys.conversations, 'shared');
      await refreshSearchDocuments(client, keys.invocations);
    });
  }

  skip(event: RecordedToolEvent, failure: { code: string; reason: string }): Promise<void> {
    return skipFailedEvent(this.pool, SEARCH_PROJECTION, event, failure);
  }
}
