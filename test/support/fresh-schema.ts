import type { Pool } from 'pg';
import { createPool, dropSchema, runMigrations } from '../../libs/persistence/src';
import { TEST_DATABASE_URL, uniqueName } from './test-environment';
import { removeTestKeyStore } from './test-keyring';

export interface FreshSchema {
  url: string;
  schema: string;
  pool: Pool;
  drop(): Promise<void>;
}

/** A migrated schema of its own for one test file, dropped afterwards. */
export async function freshSchema(prefix = 't'): Promise<FreshSchema> {
  const schema = uniqueName(prefix).toLowerCase();
  await runMigrations(TEST_DATABASE_URL, schema);
  const pool = createPool({ url: TEST_DATABASE_URL, schema, poolSize: 4, applicationName: 'toolhistory-test' });
  return {
    url: TEST_DATABASE_URL,
    schema,
    pool,
    async drop() {
      await pool.end();
      await dropSchema(TEST_DATABASE_URL, schema);
      removeTestKeyStore(schema);
    },
  };
}
