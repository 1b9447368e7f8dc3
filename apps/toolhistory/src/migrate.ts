import { loadConfig } from '@toolhistory/config';
import { exitCodeOf } from './cli/exit-codes';
import { migrateDatabase } from './operations/migrate-database';

/** `npm run migrate` (also `toolhistory migrate`): creates the database if needed and applies pending migrations. */
async function migrate(): Promise<void> {
  process.stdout.write(`${await migrateDatabase(loadConfig(process.env))}\n`);
}

migrate().catch((error) => {
  process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(exitCodeOf(error));
});
