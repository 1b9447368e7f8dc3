import { Client } from 'pg';
import { TEST_DATABASE_URL } from '../../../test/support/test-environment';
import { connectionUrl, createPool } from './database';

const secret = (value: string) => ({ reveal: () => value });

describe('how the service connects to PostgreSQL', () => {
  it('joins the password from its file into the URL, encoded, and only there', () => {
    expect(connectionUrl({ url: 'postgres://svc@db.internal:5432/toolhistory?sslmode=verify-full', password: secret('p@ss:w/rd %') })).toBe(
      'postgres://svc:p%40ss%3Aw%2Frd%20%25@db.internal:5432/toolhistory?sslmode=verify-full',
    );
    expect(connectionUrl({ url: TEST_DATABASE_URL, password: null })).toBe(TEST_DATABASE_URL);
  });

  it('honours sslmode: verify-full refuses a server without TLS, disable connects in the clear', async () => {
    // The test server has no TLS (an embedded one) or a certificate no CA here signed (Debian's snake-oil
    // one): either way a client that insists on a verified server must fail rather than fall back.
    const strict = new Client({ connectionString: `${TEST_DATABASE_URL}?sslmode=verify-full` });
    await expect(strict.connect()).rejects.toThrow(/does not support SSL|self-signed certificate|unable to verify/);
    await strict.end().catch(() => undefined);

    const pool = createPool({ url: `${TEST_DATABASE_URL}?sslmode=disable`, schema: 'public', poolSize: 1 });
    try {
      const { rows } = await pool.query('SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()');
      expect(rows).toEqual([{ ssl: false }]);
    } finally {
      await pool.end();
    }
  });
});
