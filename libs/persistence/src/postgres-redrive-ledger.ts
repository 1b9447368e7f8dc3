import type { Pool } from 'pg';
import { type DeadLetterPlace, placeKey, type RedriveLedger } from '@toolhistory/domain';
import { inTransaction } from './in-transaction';
import { classifyPostgresError } from './postgres-errors';

/**
 * Which dead letters were re-published, in PostgreSQL. A letter is claimed
 * and published in one transaction: a publish that fails leaves it
 * unclaimed, and two operators redriving at once publish it once.
 */
export class PostgresRedriveLedger implements RedriveLedger {
  constructor(private readonly pool: Pool) {}

  async redriven(places: readonly DeadLetterPlace[]): Promise<Set<string>> {
    if (places.length === 0) return new Set();
    try {
      const { rows } = await this.pool.query<{ topic: string; partition: number; offset: string }>(
        `SELECT r.topic, r.partition, r."offset"::text AS offset
         FROM dead_letter_redrives r
         JOIN unnest($1::text[], $2::int[], $3::numeric[]) AS p(topic, partition, "offset")
           ON p.topic = r.topic AND p.partition = r.partition AND p."offset" = r."offset"`,
        [places.map((p) => p.topic), places.map((p) => p.partition), places.map((p) => p.offset)],
      );
      return new Set(rows.map(placeKey));
    } catch (error) {
      throw classifyPostgresError(error);
    }
  }

  async claimAndPublish(place: DeadLetterPlace, by: string, publish: () => Promise<void>): Promise<boolean> {
    try {
      return await inTransaction(this.pool, async (client) => {
        const { rowCount } = await client.query(
          `INSERT INTO dead_letter_redrives (topic, partition, "offset", redriven_by) VALUES ($1, $2, $3, $4)
           ON CONFLICT DO NOTHING`,
          [place.topic, place.partition, place.offset, by],
        );
        if (rowCount === 0) return false;
        await publish();
        return true;
      });
    } catch (error) {
      throw classifyPostgresError(error);
    }
  }
}
