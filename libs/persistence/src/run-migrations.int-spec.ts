import { Client } from 'pg';
import { uniqueName, TEST_DATABASE_URL } from '../../../test/support/test-environment';
import { runMigrations } from './run-migrations';

async function adminQuery(sql: string, params: unknown[] = []) {
  const url = new URL(TEST_DATABASE_URL);
  url.pathname = '/postgres';
  const client = new Client({ connectionString: url.toString() });
  await client.connect();
  try {
    return await client.query(sql, params);
  } finally {
    await client.end();
  }
}

const ALL_MIGRATIONS = [
  '001_event-store-and-read-model',
  '002_conversation-event-count',
  '003_redaction-and-erasure',
  '004_audit-queries',
  '005_full-text-search',
  '006_projection-checkpoints',
  '007_projection-failures',
  '008_listing-by-round-and-sequence',
  '009_search-projection',
  '010_payload-text-as-received',
  '011_room-for-updates-in-place',
  '012_payloads-read-from-events',
  '013_search-index-without-pending-list',
  '014_invocation-token-counts',
  '015_dead-letter-redrives',
  '016_event-trace-context',
  '017_external-event-traces',
  '018_approvals-and-resumed-runs',
  '019_producer-redaction',
  '020_cited-sources',
  '021_substring-search',
  '022_read-your-writes-and-forks',
  '024_encryption-at-rest-and-retention',
  '025_model-responses-and-reasoning',
  '026_event-pair-keys',
];

describe('runMigrations (real PostgreSQL)', () => {
  it('lets instances that start together wait for each other instead of failing, in one schema or in several', async () => {
    const schema = uniqueName('concurrent').toLowerCase();
    const other = uniqueName('concurrent').toLowerCase();
    try {
      const results = await Promise.all([schema, schema, other, schema, other].map((s) => runMigrations(TEST_DATABASE_URL, s)));
      expect(results.flat()).toEqual([...ALL_MIGRATIONS, ...ALL_MIGRATIONS]);
    } finally {
      const client = new Client({ connectionString: TEST_DATABASE_URL });
      await client.connect();
      for (const s of [schema, other]) await client.query(`DROP SCHEMA IF EXISTS "${s}" CASCADE`);
      await client.end();
    }
  });

  it('creates a missing database, applies every migration once, and is a no-op the second time', async () => {
    const database = uniqueName('toolhistory_mig').toLowerCase();
    const url = new URL(TEST_DATABASE_URL);
    url.pathname = `/${database}`;
    try {
      const first = await runMigrations(url.toString(), 'public');
      expect(first).toEqual(ALL_MIGRATIONS);
      const found = await adminQuery('SELECT 1 FROM pg_database WHERE datname = $1', [database]);
      expect(found.rowCount).toBe(1);
      expect(await runMigrations(url.toString(), 'public')).toEqual([]);

      const client = new Client({ connectionString: url.toString() });
      await client.connect();
      const tables = await client.query(`SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' ORDER BY 1`);
      await client.end();
      expect(tables.rows.map((r) => r.table_name)).toEqual(
        expect.arrayContaining(['consumer_offsets', 'conversations', 'events', 'invocations', 'runs', 'streams']),
      );
    } finally {
      await adminQuery(`DROP DATABASE IF EXISTS "${database}" WITH (FORCE)`);
    }
  });
});
