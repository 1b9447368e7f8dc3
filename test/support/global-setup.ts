import { spawnSync } from 'node:child_process';
import { createConnection } from 'node:net';
import { join, resolve } from 'node:path';
import { type LocalDatabase, openLocalDatabase, readLocalSettings } from '../../libs/local-database/src';
import { ensureDatabase } from '../../libs/persistence/src/database';
import { TEST_KAFKA_BROKERS } from './test-environment';

const ROOT = resolve(__dirname, '../..');
/** Shared by the tiers' setups and teardowns, which run in jest's own process. */
const OPENED = Symbol.for('toolhistory.testDatabase');
type WithTestDatabase = typeof globalThis & { [OPENED]?: LocalDatabase };

function reachable(hostPort: string): Promise<boolean> {
  const [host, port] = hostPort.split(':');
  return new Promise((done) => {
    const socket = createConnection({ host, port: Number(port) });
    socket.setTimeout(1_000);
    socket.once('connect', () => {
      socket.destroy();
      done(true);
    });
    socket.once('error', () => done(false));
    socket.once('timeout', () => {
      socket.destroy();
      done(false);
    });
  });
}

/**
 * Runs before the integration and e2e tiers: starts the project's Kafka
 * broker when none answers, and opens the test database by the same rule as
 * `npm run start:local` (TEST_DATABASE_URL; else a local PostgreSQL that lets
 * postgres in without a password; else an embedded one, stopped by the
 * teardown), then creates the database `toolhistory_test` on it.
 */
export default async function globalSetup(): Promise<void> {
  if (!(await reachable(TEST_KAFKA_BROKERS[0]))) {
    const started = spawnSync('bash', [join(ROOT, 'scripts/kafka-broker.sh'), 'start'], { stdio: 'inherit' });
    if (started.status !== 0) throw new Error('could not start the local Kafka broker (scripts/kafka-broker.sh start)');
  }
  const shared = globalThis as WithTestDatabase;
  if (!shared[OPENED]) {
    const settings = readLocalSettings(process.env, ROOT);
    const database = await openLocalDatabase({
      variable: 'TEST_DATABASE_URL',
      configuredUrl: process.env.TEST_DATABASE_URL,
      database: 'toolhistory_test',
      localPort: settings.localPostgresPort,
      embeddedDirectory: join(settings.embeddedPostgresDir, 'test'),
    });
    process.stdout.write(`\n[tests] database: ${database.reason}\n`);
    shared[OPENED] = database;
    // Read by test-environment.ts in every test file, and passed on to the processes the tests start.
    process.env.TEST_DATABASE_URL = database.url;
  }
  await ensureDatabase(shared[OPENED].url);
}

/** The embedded database this run started, if any, stops with the run. */
export async function stopTestDatabase(): Promise<void> {
  const shared = globalThis as WithTestDatabase;
  const database = shared[OPENED];
  delete shared[OPENED];
  await database?.stop();
}
