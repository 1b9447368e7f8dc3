import type { Pool, PoolClient } from 'pg';
import { withClient } from './checked-out-client';
import { classifyPostgresError } from './postgres-errors';

/** Runs `work` in one transaction; any failure rolls back and comes out classified. */
export async function inTransaction<T>(pool: Pool, work: (client: PoolClient) => Promise<T>): Promise<T> {
  try {
    return await withClient(pool, async (client) => {
      await client.query('BEGIN');
      try {
        const result = await work(client);
        await client.query('COMMIT');
        return result;
      } catch (error) {
        await client.query('ROLLBACK').catch(() => undefined);
        throw error;
      }
    });
  } catch (error) {
    throw classifyPostgresError(error);
  }
}
