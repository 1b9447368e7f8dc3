import type { Pool } from 'pg';
import type { ToolEventType } from '@toolhistory/contract';
import type { RecordingProgressReader } from '@toolhistory/domain';
import { classifyPostgresError } from './postgres-errors';
import { type PostgresQueryCanceller, UNCANCELLABLE } from './postgres-query-canceller';

/** Where recording stands, each answer one primary-key (or index end) lookup. */
export class PostgresRecordingProgressReader implements RecordingProgressReader {
  private readonly canceller: Pick<PostgresQueryCanceller, 'query'>;

  constructor(
    private readonly pool: Pool,
    canceller?: PostgresQueryCanceller,
  ) {
    this.canceller = canceller ?? UNCANCELLABLE;
  }

  async recordedOffset(consumerGroup: string, topic: string, partition: number, signal?: AbortSignal) {
    const rows = await this.rows<{ next_offset: string; recorded_position: string | null }>(
      'recorded-offset',
      'SELECT next_offset::text, recorded_position::text FROM consumer_offsets WHERE group_id = $1 AND topic = $2 AND partition = $3',
      [consumerGroup, topic, partition],
      signal,
    );
    // -1: the row exists (a batch took its lock) but nothing was committed past it yet.
    if (rows.length === 0 || rows[0].next_offset === '-1') return null;
    const { next_offset, recorded_position } = rows[0];
    return { nextOffset: BigInt(next_offset), ...(recorded_position === null ? {} : { position: BigInt(recorded_position) }) };
  }

  async lastPosition(signal?: AbortSignal): Promise<bigint> {
    const rows = await this.rows<{ position: string | null }>(
      'last-position',
      'SELECT max(global_position)::text AS position FROM events',
      [],
      signal,
    );
    return BigInt(rows[0]?.position ?? 0);
  }

  /** A backward scan of the events' primary key from `atMost`: the last call or result is rarely far. */
  async lastPositionOf(types: readonly ToolEventType[], atMost: bigint, signal?: AbortSignal): Promise<bigint> {
    const rows = await this.rows<{ position: string }>(
      'last-position-of-types',
      'SELECT global_position::text AS position FROM events WHERE global_position <= $1 AND type = ANY($2::text[]) ORDER BY global_position DESC LIMIT 1',
      [atMost.toString(), types],
      signal,
    );
    return BigInt(rows[0]?.position ?? 0);
  }

  async checkpoint(projection: string, signal?: AbortSignal): Promise<bigint> {
    const rows = await this.rows<{ position: string }>(
      'projection-checkpoint',
      'SELECT position::text FROM projection_checkpoints WHERE projection = $1',
      [projection],
      signal,
    );
    return BigInt(rows[0]?.position ?? 0);
  }

  private async rows<R extends Record<string, unknown>>(name: string, text: string, values: unknown[], signal?: AbortSignal): Promise<R[]> {
    try {
      return (await this.canceller.query<R>(this.pool, { name, text, values }, signal)).rows;
    } catch (error) {
      throw classifyPostgresError(error);
    }
  }
}
