import type { Pool, PoolClient } from 'pg';
import { AppError } from '@toolhistory/errors';

/** A failure of the connection itself: neither the database's answer (SQLSTATE) nor one of ours. */
const connectionFailed = (error: unknown): boolean => {
  if (error instanceof AppError) return false;
  const code = (error as { code?: unknown })?.code;
  return !(typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code));
};

/**
 * A client taken from the pool for a while. A connection that drops while
 * the client is out emits 'error' on it (pg-pool listens only to idle
 * clients); unheard, that event ends the process, so it is heard here: the
 * failure reaches the caller through the query that fails. A client whose
 * connection failed is not given back.
 */
export async function withClient<T>(pool: Pool, work: (client: PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  const ignore = () => undefined;
  client.on('error', ignore);
  let broken: Error | undefined;
  try {
    return await work(client);
  } catch (error) {
    if (connectionFailed(error)) broken = error as Error;
    throw error;
  } finally {
    client.off('error', ignore);
    client.release(broken);
  }
}
