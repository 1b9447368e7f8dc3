import type { AppConfig } from '@toolhistory/config';
import { connectionUrl, runMigrations } from '@toolhistory/persistence';

/** Creates the database if needed and applies pending migrations; says what it did. */
export async function migrateDatabase(config: AppConfig): Promise<string> {
  const applied = await runMigrations(connectionUrl(config.database), config.database.schema, { info: () => undefined });
  return applied.length > 0 ? `applied: ${applied.join(', ')}` : `database ${config.database.schema} schema is up to date`;
}
