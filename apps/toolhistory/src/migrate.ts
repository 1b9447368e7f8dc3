import { loadConfig } from '@toolhistory/config';
import { connectionUrl, runMigrations } from '@toolhistory/persistence';

/** `npm run migrate`: creates the database if needed and applies pending migrations. */
async function migrate(): Promise<void> {
  const config = loadConfig(process.env);
  const applied = await runMigrations(connectionUrl(config.database), config.database.schema, { info: () => undefined });
  process.stdout.write(
    applied.length > 0 ? `applied: ${applied.join(', ')}\n` : `database ${config.database.schema} schema is up to date\n`,
  );
}

migrate().catch((error) => {
  process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
