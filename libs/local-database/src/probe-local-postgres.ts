import { Client } from 'pg';
import type { LocalProbe } from './choose-database';

/** Whether PostgreSQL lets `postgres` in on 127.0.0.1:port without a password, and if not, why not. */
export async function probeLocalPostgres(port: number, timeoutMs = 2_000): Promise<LocalProbe> {
  // An empty password: a server that asks for one refuses at once instead of the driver looking for ~/.pgpass.
  const client = new Client({
    host: '127.0.0.1',
    port,
    user: 'postgres',
    password: '',
    database: 'postgres',
    connectionTimeoutMillis: timeoutMs,
  });
  client.on('error', () => undefined);
  try {
    await client.connect();
    await client.query('SELECT 1');
    return { answers: true };
  } catch (error) {
    return { answers: false, why: describe(error) };
  } finally {
    await client.end().catch(() => undefined);
  }
}

function describe(error: unknown): string {
  const { code, message } = error as { code?: string; message?: string };
  if (code === 'ECONNREFUSED') return 'connection refused';
  // node-postgres refuses to answer a password challenge with an empty password before the server does.
  if (code === '28P01' || /password must be|password authentication failed/i.test(message ?? '')) return 'it asks for a password';
  if (code === '28000') return 'it refuses the user postgres';
  return message || String(error);
}
