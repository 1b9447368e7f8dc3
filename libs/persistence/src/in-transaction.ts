import type { Pool, PoolClient } from 'pg';
import { classifyPostgresError } from './postgres-errors';

/** Runs `work` in one transaction; any failure rolls back and comes out classified. */
export async function inTransaction<T>(pool: Pool, work: (client: PoolClient) => Promise<T>): Promise<T> {
  let client: PoolClient | undefined;
  try {
    client = await pool.connect();
    await client.query('BEGIN');
    const result = await work(client);
    await client.query('COMMIT');
    return result;
  } catch (error) {
    if (client) await client.query('ROLLBACK').catch(() => undefined);
    throw classifyPostgresError(error);
  } finally {
    client?.release();
  }
}
