import type { Pool, PoolClient } from 'pg';
import { comparePositions, GlobalPosition, RecordedEventKeys, START_POSITION } from '@toolhistory/domain';
import { inTransaction } from './in-transaction';
import { classifyPostgresError } from './postgres-errors';
import { notifyRecordingProgress } from './postgres-conversation-changes';

/** The last global position applied to a projection ("0": none). */
export async function readCheckpoint(pool: Pool, projection: string): Promise<GlobalPosition> {
  try {
    const { rows } = await pool.query<{ position: string }>('SELECT position::text FROM projection_checkpoints WHERE projection = $1', [
      projection,
    ]);
    return rows[0]?.position ?? START_POSITION;
  } catch (error) {
    throw classifyPostgresError(error);
  }
}

/**
 * Locks the projection's checkpoint row until the transaction ends and
 * answers it: whoever applies events to a projection takes this first, so
 * two appliers (or an applier and a rebuild's swap) take turns.
 */
export async function lockCheckpoint(client: PoolClient, projection: string): Promise<GlobalPosition> {
  const { rows } = await client.query<{ position: string }>(
    `INSERT INTO projection_checkpoints (projection, position) VALUES ($1, 0)
     ON CONFLICT (projection) DO UPDATE SET position = projection_checkpoints.position
     RETURNING position::text`,
    [projection],
  );
  return rows[0].position;
}

/**
 * The shape of every checkpointed apply: in one transaction, lock the
 * checkpoint, drop the events it already covers (a redelivered or
 * concurrently applied batch), let `work` write what the rest change, and
 * move the checkpoint to the last of them.
 */
export function applyPastCheckpoint<T extends RecordedEventKeys>(
  pool: Pool,
  projection: string,
  recorded: readonly T[],
  work: (client: PoolClient, fresh: readonly T[]) => Promise<void>,
): Promise<void> {
  if (recorded.length === 0) return Promise.resolve();
  return inTransaction(pool, async (client) => {
    const checkpoint = await lockCheckpoint(client, projection);
    const fresh = recorded.filter((r) => comparePositions(r.globalPosition, checkpoint) > 0);
    if (fresh.length === 0) return;
    await work(client, fresh);
    await advanceCheckpoint(client, projection, fresh[fresh.length - 1].globalPosition);
  });
}

export async function advanceCheckpoint(client: PoolClient, projection: string, position: GlobalPosition): Promise<void> {
  await client.query(
    `INSERT INTO projection_checkpoints (projection, position) VALUES ($1, $2::numeric)
     ON CONFLICT (projection) DO UPDATE SET position = EXCLUDED.position, updated_at = now()`,
    [projection, position],
  );
  // Readers waiting for their events in this projection hear it at commit.
  await notifyRecordingProgress(client, { kind: 'checkpoint', projection, position: BigInt(position) });
}

/** Moves the checkpoint past an event that cannot be applied, keeping what was skipped and why. */
export function skipFailedEvent(
  pool: Pool,
  projection: string,
  event: RecordedEventKeys,
  failure: { code: string; reason: string },
): Promise<void> {
  return inTransaction(pool, async (client) => {
    await client.query(
      `INSERT INTO projection_failures (projection, position, event_id, error_code, reason) VALUES ($1, $2::numeric, $3, $4, $5)
       ON CONFLICT (projection, position) DO NOTHING`,
      [projection, event.globalPosition, event.event.eventId, failure.code, failure.reason],
    );
    const { rows } = await client.query<{ position: string }>(
      `INSERT INTO projection_checkpoints (projection, position) VALUES ($1, $2::numeric)
       ON CONFLICT (projection) DO UPDATE SET position = greatest(projection_checkpoints.position, EXCLUDED.position), updated_at = now()
       RETURNING position::text`,
      [projection, event.globalPosition],
    );
    await notifyRecordingProgress(client, { kind: 'checkpoint', projection, position: BigInt(rows[0].position) });
  });
}

/**
 * How far each projection is behind, with events in this database (the
 * PostgreSQL event store): the global position of the last event of the
 * types it applies, minus its checkpoint (none yet: from the start).
 */
export async function projectionLag(pool: Pool, projection: string, types: readonly string[]): Promise<number> {
  try {
    const { rows } = await pool.query<{ lag: number }>(
      `SELECT greatest(0, (SELECT coalesce(max(global_position), 0) FROM events WHERE type = ANY($2::text[]))
                          - coalesce((SELECT position FROM projection_checkpoints WHERE projection = $1), 0))::float8 AS lag`,
      [projection, types],
    );
    return rows[0].lag;
  } catch (error) {
    throw classifyPostgresError(error);
  }
}
