import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { runner } from 'node-pg-migrate';
import { Client } from 'pg';
import { ensureDatabase } from './database';

/** The SQL files live beside the sources; this finds them from src/ and from dist/. */
export function migrationsDirectory(): string {
  const candidates = [resolve(__dirname, '../migrations'), resolve(__dirname, '../../../../libs/persistence/migrations')];
  const found = candidates.find((dir) => existsSync(dir));
  if (!found) throw new Error(`migrations folder not found (looked in ${candidates.join(', ')})`);
  return found;
}

export interface MigrationLog {
  info(message: string): void;
}

/**
 * Creates the database and schema when missing and applies pending migrations.
 * Instances starting together wait for each other: node-pg-migrate's own lock
 * fails at once when taken, and it is one lock per database whatever the
 * schema, so a blocking advisory lock per database serializes them first.
 */
export async function runMigrations(url: string, schema: string, log?: MigrationLog): Promise<string[]> {
  await ensureDatabase(url);
  const lock = new Client({ connectionString: url, connectionTimeoutMillis: 5_000 });
  await lock.connect();
  try {
    await lock.query(`SELECT pg_advisory_lock(hashtext('toolhistory.migrations'))`);
    return await applyMigrations(url, schema, log);
  } finally {
    await lock.end(); // ends the session, which releases the lock
  }
}

async function applyMigrations(url: string, schema: string, log?: MigrationLog): Promise<string[]> {
  const applied = await runner({
    databaseUrl: url,
    dir: migrationsDirectory(),
    direction: 'up',
    migrationsTable: 'schema_migrations',
    schema,
    createSchema: true,
    checkOrder: true,
    singleTransaction: true,
    log: (message: string) => log?.info(message),
    verbose: false,
  });
  return applied.map((m) => m.name);
}
