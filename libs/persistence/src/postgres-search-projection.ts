import type { Pool } from 'pg';
import { CheckpointedProjection, comparePositions, GlobalPosition, keysTouchedBy, RecordedToolEvent } from '@toolhistory/domain';
import { inTransaction } from './in-transaction';
import { advanceCheckpoint, lockCheckpoint, readCheckpoint, skipFailedEvent } from './postgres-projection-checkpoints';
import { lockConversationsForSearch, refreshSearchDocuments } from './postgres-search-documents';

/** The checkpoint of the search projection: the last global position whose invocations have their documents. */
export const SEARCH_PROJECTION = 'search';

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
    if (recorded.length === 0) return Promise.resolve();
    return inTransaction(this.pool, async (client) => {
      const checkpoint = await lockCheckpoint(client, SEARCH_PROJECTION);
      const fresh = recorded.filter((r) => comparePositions(r.globalPosition, checkpoint) > 0);
      if (fresh.length === 0) return;
      const keys = keysTouchedBy(fresh.map((r) => r.event));
      await lockConversationsForSearch(client, keys.conversations, 'shared');
      await refreshSearchDocuments(client, keys.invocations);
      await advanceCheckpoint(client, SEARCH_PROJECTION, fresh[fresh.length - 1].globalPosition);
    });
  }

  skip(event: RecordedToolEvent, failure: { code: string; reason: string }): Promise<void> {
    return skipFailedEvent(this.pool, SEARCH_PROJECTION, event, failure);
  }
}
