import { Client, Pool, PoolConfig } from 'pg';

export interface DatabaseSettings {
  url: string;
  /** Kept apart from the URL in the config (DATABASE_PASSWORD_FILE); joined only here. */
  password?: { reveal(): string } | null;
  schema: string;
  poolSize: number;
  applicationName?: string;
  /** Server-side limit of one statement (0: none, for rebuilds and migrations). */
  statementTimeoutMs?: number;
  /** A session idle inside a transaction this long is ended, releasing its locks (0: never). */
  idleInTransactionTimeoutMs?: number;
}

const quoteIdent = (name: string): string => `"${name.replace(/"/g, '""')}"`;

/**
 * The URL a driver connects with: the configured URL with the password from
 * its file, when there is one. node-postgres lets the URL's (empty) password
 * win over a separate one, so it has to travel inside. sslmode and the other
 * libpq parameters of the URL are read by node-postgres itself.
 */
export function connectionUrl(settings: Pick<DatabaseSettings, 'url' | 'password'>): string {
  if (!settings.password) return settings.url;
  const url = new URL(settings.url);
  url.password = encodeURIComponent(settings.password.reveal());
  return url.toString();
}

/**
 * Every connection works in one schema and in UTC, so tests can use a fresh
 * schema each. The service's connections also carry server-side limits: a
 * statement that runs away is cancelled, and a session left idle in a
 * transaction (a client that died holding the append lock) is ended. TCP
 * keepalive notices a peer that vanished without closing.
 */
export function createPool(
  settings: DatabaseSettings,
  extra: Partial<PoolConfig> = {},
  onIdleError: (error: Error) => void = () => undefined,
): Pool {
  const pool = new Pool({
    connectionString: connectionUrl(settings),
    max: settings.poolSize,
    application_name: settings.applicationName ?? 'toolhistory',
    options: [
      `-c search_path=${settings.schema}`,
      '-c timezone=UTC',
      `-c statement_timeout=${settings.statementTimeoutMs ?? 0}`,
      `-c idle_in_transaction_session_timeout=${settings.idleInTransactionTimeoutMs ?? 0}`,
    ].join(' '),
    connectionTimeoutMillis: 5_000,
    idleTimeoutMillis: 30_000,
    keepAlive: true,
    keepAliveInitialDelayMillis: 10_000,
    ...extra,
  });
  // An idle connection that drops (database restart, network cut) emits 'error' on the pool;
  // unhandled, that would end the process. The pool replaces the connection on next use.
  pool.on('error', onIdleError);
  return pool;
}

/** Creates the database named in the URL when the server does not have it yet. */
export async function ensureDatabase(url: string): Promise<void> {
  const target = new URL(url);
  const name = decodeURIComponent(target.pathname.replace(/^\//, '')) || 'postgres';
  const admin = new URL(url);
  admin.pathname = '/postgres';
  const client = new Client({ connectionString: admin.toString(), connectionTimeoutMillis: 5_000 });
  await client.connect();
  try {
    const found = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
    if (found.rowCount === 0) {
      try {
        await client.query(`CREATE DATABASE ${quoteIdent(name)}`);
      } catch (error) {
        // Another instance created it between our check and our CREATE.
        if ((error as { code?: string }).code !== '42P04') throw error;
      }
    }
  } finally {
    await client.end();
  }
}

export async function dropSchema(url: string, schema: string): Promise<void> {
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(`DROP SCHEMA IF EXISTS ${quoteIdent(schema)} CASCADE`);
  } finally {
    await client.end();
  }
}
