import type { Pool, PoolClient } from 'pg';
import type { ConsumerOffsets, GlobalPosition, Offset, PartitionRef } from '@toolhistory/domain';
import { classifyPostgresError } from './postgres-errors';
import { inTransaction } from './in-transaction';
import { notifyRecordingProgress } from './postgres-conversation-changes';

/**
 * The recorder's Kafka positions kept in PostgreSQL (`consumer_offsets`):
 * where to resume after a restart or a rebalance. The PostgreSQL recording
 * unit moves them inside its batch transaction; with another event store
 * they are moved after the batch is appended (idempotent appends make a
 * repeat harmless).
 */
export class PostgresConsumerOffsets implements ConsumerOffsets {
  constructor(private readonly pool: Pool) {}

  async committed(consumerGroup: string, topic: string): Promise<Map<number, Offset>> {
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

  /**
   * Moves the partition's next offset forward; never back (a late, stale
   * batch cannot rewind it), with the last position recorded, and tells
   * readers waiting for their events at commit.
   */
  async advance(partition: PartitionRef, nextOffset: Offset, position?: GlobalPosition): Promise<void> {
    // inTransaction classifies what fails.
    await inTransaction(this.pool, async (client) => {
      const { rows } = await client.query<{ next_offset: string; recorded_position: string | null }>(
        `INSERT INTO consumer_offsets (group_id, topic, partition, next_offset, recorded_position) VALUES ($1, $2, $3, $4, $5::numeric)
         ON CONFLICT (group_id, topic, partition) DO UPDATE
           SET next_offset = greatest(consumer_offsets.next_offset, EXCLUDED.next_offset),
               recorded_position = greatest(consumer_offsets.recorded_position, EXCLUDED.recorded_position),
               updated_at = now()
         RETURNING next_offset::text, recorded_position::text`,
        [partition.consumerGroup, partition.topic, partition.partition, nextOffset, position ?? null],
      );
      const { next_offset, recorded_position } = rows[0];
      await notifyRecordingProgress(client, {
        kind: 'recorded',
        ...partition,
        nextOffset: BigInt(next_offset),
        ...(recorded_position === null ? {} : { position: BigInt(recorded_position) }),
      });
    });
  }
}

/**
 * Locks the partition's offset row and returns the next offset PostgreSQL
 * holds for it (-1: none yet, the consumer starts the partition at its
 * beginning). A consumer that still holds the partition after a rebalance
 * waits here, then sees the new offset and skips what was committed
 * (decideOffsets says what the batch does against it).
 */
export async function lockPartitionOffset(client: PoolClient, partition: PartitionRef): Promise<bigint> {
  const stored = await client.query<{ next_offset: string }>(
    `INSERT INTO consumer_offsets (group_id, topic, partition, next_offset) VALUES ($1, $2, $3, -1)
     ON CONFLICT (group_id, topic, partition) DO UPDATE SET next_offset = consumer_offsets.next_offset
     RETURNING next_offset`,
    [partition.consumerGroup, partition.topic, partition.partition],
  );
  return BigInt(stored.rows[0].next_offset);
}

/** Moves the partition's offset inside the batch transaction that holds its row's lock. */
export async function advancePartitionOffset(client: PoolClient, partition: PartitionRef, nextOffset: Offset): Promise<void> {
  await client.query(
    `UPDATE consumer_offsets SET next_offset = $4, updated_at = now()
     WHERE group_id = $1 AND topic = $2 AND partition = $3`,
    [partition.consumerGroup, partition.topic, partition.partition, nextOffset],
  );
}
