import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { runner } from 'node-pg-migrate';
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
 * node-pg-migrate takes an advisory lock, so instances starting together are safe.
 */
export async function runMigrations(url: string, schema: string, log?: MigrationLog): Promise<string[]> {
  await ensureDatabase(url);
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
