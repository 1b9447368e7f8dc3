import type { Pool, PoolClient, QueryConfig, QueryResult, QueryResultRow } from 'pg';
import { AppError, ErrorCode } from '@toolhistory/errors';
import { createPool, type DatabaseSettings } from './database';

/**
 * Runs a query that must not outlive its caller: when the signal aborts (the
 * caller's deadline passed, the caller went away), the statement is
 * cancelled in PostgreSQL, not left running for nobody. Cancelling goes
 * through a connection of its own, so it works even while the query's pool
 * is exhausted, which is often why the deadline passed.
 */
export class PostgresQueryCanceller {
  private readonly control: Pool;

  constructor(settings: DatabaseSettings, onIdleError?: (error: Error) => void) {
    this.control = createPool(
      { ...settings, poolSize: 1, applicationName: 'toolhistory-canceller', statementTimeoutMs: 5_000 },
      {},
      onIdleError,
    );
  }

  async query<R extends QueryResultRow>(pool: Pool, config: QueryConfig, signal: AbortSignal | undefined): Promise<QueryResult<R>> {
    if (!signal) return pool.query<R>(config);
    if (signal.aborted) throw deadlinePassed();
    const client: PoolClient = await pool.connect();
    // A connection that drops mid-query fails the query (handled below) and also emits 'error' on the
    // client: unheard, that event would end the process.
    const ignore = () => undefined;
    client.on('error', ignore);
    const cancel = () =>
      void this.control
        .query('SELECT pg_cancel_backend($1)', [(client as unknown as { processID: number }).processID])
        .catch(() => undefined);
    let broken: Error | undefined;
    try {
      if (signal.aborted) throw deadlinePassed();
      signal.addEventListener('abort', cancel, { once: true });
      return await client.query<R>(config);
    } catch (error) {
      // No SQLSTATE: the connection itself failed, and is not given back to the pool.
      if (typeof (error as { code?: unknown }).code !== 'string' || !/^[0-9A-Z]{5}$/.test((error as { code: string }).code)) {
        broken = error as Error;
      }
      throw signal.aborted ? deadlinePassed(error) : error;
    } finally {
      signal.removeEventListener('abort', cancel);
      client.off('error', ignore);
      client.release(broken);
    }
  }

  close(): Promise<void> {
    return this.control.end();
  }
}

const deadlinePassed = (cause?: unknown) =>
  new AppError(ErrorCode.DeadlineExceeded, "the caller's deadline passed; the query was cancelled", { cause });
