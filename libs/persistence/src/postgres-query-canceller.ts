import type { Pool, QueryConfig, QueryResult, QueryResultRow } from 'pg';
import { AppError, ErrorCode } from '@toolhistory/errors';
import { withClient } from './checked-out-client';
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
    return withClient(pool, async (client) => {
      const cancel = () =>
        void this.control
          .query('SELECT pg_cancel_backend($1)', [(client as unknown as { processID: number }).processID])
          .catch(() => undefined);
      try {
        if (signal.aborted) throw deadlinePassed();
        signal.addEventListener('abort', cancel, { once: true });
        return await client.query<R>(config);
      } catch (error) {
        throw signal.aborted ? deadlinePassed(error) : error;
      } finally {
        signal.removeEventListener('abort', cancel);
      }
    });
  }

  close(): Promise<void> {
    return this.control.end();
  }
}

/** For a reader built without a canceller: queries run as they would with no deadline at all. */
export const UNCANCELLABLE: Pick<PostgresQueryCanceller, 'query'> = { query: (pool, config) => pool.query(config) };

const deadlinePassed = (cause?: unknown) =>
  new AppError(ErrorCode.DeadlineExceeded, "the caller's deadline passed; the query was cancelled", { cause });
