import { Client } from 'pg';
import { ErrorCode } from '@toolhistory/errors';
import { TEST_DATABASE_URL, uniqueName } from '../../../test/support/test-environment';
import { TcpProxy } from '../../../test/support/tcp-proxy';
import { waitFor } from '../../../test/support/wait-for';
import { createPool } from './database';
import { PostgresQueryCanceller } from './postgres-query-canceller';

const settings = (name: string) => ({ url: TEST_DATABASE_URL, schema: 'public', poolSize: 2, applicationName: name });

/** Sessions of an application, and whether each waits on a lock. */
async function sessions(applicationName: string): Promise<Array<{ state: string; waiting: boolean }>> {
  const client = new Client({ connectionString: TEST_DATABASE_URL });
  await client.connect();
  try {
    const { rows } = await client.query(
      `SELECT state, wait_event_type = 'Lock' AS waiting FROM pg_stat_activity WHERE application_name = $1 AND pid <> pg_backend_pid()`,
      [applicationName],
    );
    return rows;
  } finally {
    await client.end();
  }
}

describe("the service's database connections (real PostgreSQL)", () => {
  it('cancel a statement that runs past the statement limit', async () => {
    const pool = createPool({ ...settings(uniqueName('limits')), statementTimeoutMs: 200 });
    try {
      await expect(pool.query('SELECT pg_sleep(5)')).rejects.toMatchObject({ code: '57014' });
    } finally {
      await pool.end();
    }
  });

  it('end a session left idle inside a transaction, releasing what it held', async () => {
    const name = uniqueName('idle');
    const pool = createPool({ ...settings(name), idleInTransactionTimeoutMs: 300 });
    const client = await pool.connect();
    client.on('error', () => undefined);
    try {
      await client.query('BEGIN');
      await client.query('SELECT 1');
      await waitFor(
        () => sessions(name),
        (s) => s.length === 0,
        { what: 'the idle transaction to be ended', timeoutMs: 10_000 },
      );
    } finally {
      client.release(true);
      await pool.end();
    }
  });

  it("cancel a query in the database once its caller's deadline passes, even with its pool busy", async () => {
    const name = uniqueName('deadline');
    const pool = createPool(settings(name));
    const canceller = new PostgresQueryCanceller(settings(uniqueName('canceller')));
    const table = uniqueName('locked').toLowerCase();
    const holder = new Client({ connectionString: TEST_DATABASE_URL });
    await holder.connect();
    try {
      await holder.query(`CREATE TABLE ${table} (id int)`);
      await holder.query('BEGIN');
      await holder.query(`LOCK TABLE ${table} IN ACCESS EXCLUSIVE MODE`);
      // Two queries wait on the lock: the pool (of two) is exhausted, the caller gives up after 300 ms.
      const signal = AbortSignal.timeout(300);
      const blocked = [
        canceller.query(pool, { text: `SELECT * FROM ${table}` }, signal),
        canceller.query(pool, { text: `SELECT * FROM ${table}` }, signal),
      ];
      for (const outcome of await Promise.allSettled(blocked)) {
        expect(outcome).toMatchObject({ status: 'rejected', reason: { code: ErrorCode.DeadlineExceeded } });
      }
      // Nothing of them is left running while the lock is still held.
      expect((await sessions(name)).filter((s) => s.waiting || s.state === 'active')).toEqual([]);
    } finally {
      await holder.query('ROLLBACK');
      await holder.query(`DROP TABLE ${table}`);
      await holder.end();
      await canceller.close();
      await pool.end();
    }
  });

  it('survive a connection that drops in the middle of a cancellable query: the query fails, nothing else does', async () => {
    const target = new URL(TEST_DATABASE_URL);
    const proxy = new TcpProxy(target.hostname, Number(target.port || 5432));
    await proxy.start();
    const viaProxy = new URL(TEST_DATABASE_URL);
    viaProxy.port = String(proxy.port);
    const pool = createPool({ ...settings(uniqueName('dropped')), url: viaProxy.toString() });
    pool.on('error', () => undefined);
    const canceller = new PostgresQueryCanceller(settings(uniqueName('canceller')));
    try {
      const query = canceller.query(pool, { text: 'SELECT pg_sleep(5)' }, AbortSignal.timeout(10_000));
      await waitFor(
        () => sessions(pool.options.application_name as string),
        (s) => s.some((x) => x.state === 'active'),
        { what: 'the query running' },
      );
      await proxy.cut();
      await expect(query).rejects.toThrow();
      // The broken connection was not given back: the next query gets a new one once the database is reachable.
      await proxy.restore();
      await expect(canceller.query(pool, { text: 'SELECT 1 AS one' }, AbortSignal.timeout(5_000))).resolves.toMatchObject({
        rows: [{ one: 1 }],
      });
    } finally {
      await proxy.cut();
      await canceller.close();
      await pool.end();
    }
  });
});
