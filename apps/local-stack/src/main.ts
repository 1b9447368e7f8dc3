/**
 * `npm run start:local`: the whole service on a developer's machine with
 * nothing set up by hand. It starts the project's Kafka broker unless
 * KAFKA_BROKERS names one, opens a database (DATABASE_URL; else a local
 * PostgreSQL that lets `postgres` in without a password; else an embedded
 * PostgreSQL under .cache/postgres), runs the built service with every role,
 * and, when the service ends, stops the embedded database it started.
 */
import { spawn, spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { openLocalDatabase, readLocalSettings } from '@toolhistory/local-database';
import { findProjectRoot } from './find-project-root';
import { localLogger } from './local-logger';

const EXIT_SOFTWARE = 70;

async function main(): Promise<void> {
  const root = findProjectRoot(__dirname);
  const logger = localLogger();
  const settings = readLocalSettings(process.env, root);

  if (process.env.KAFKA_BROKERS) {
    logger.info({ brokers: process.env.KAFKA_BROKERS }, 'Kafka: KAFKA_BROKERS is set; using it');
  } else {
    const broker = spawnSync('bash', [join(root, 'scripts', 'kafka-broker.sh'), 'start'], { stdio: 'inherit' });
    if (broker.status !== 0) throw new Error('the local Kafka broker did not start (scripts/kafka-broker.sh start)');
  }

  const database = await openLocalDatabase({
    variable: 'DATABASE_URL',
    configuredUrl: process.env.DATABASE_URL,
    database: 'toolhistory',
    localPort: settings.localPostgresPort,
    embeddedDirectory: join(settings.embeddedPostgresDir, 'local'),
  });
  logger.info(
    { database: database.source, ...(database.embedded ? { log: database.embedded.logFile } : {}) },
    `database: ${database.reason}`,
  );

  const env: NodeJS.ProcessEnv = { ...process.env };
  if (database.embedded) {
    env.DATABASE_URL = database.embedded.urlWithoutPassword;
    env.DATABASE_PASSWORD_FILE = database.embedded.passwordFile;
  } else {
    env.DATABASE_URL = database.url;
  }
  const service = spawn(process.execPath, [join(root, 'dist', 'apps', 'toolhistory', 'src', 'main.js')], { stdio: 'inherit', env });
  // A Ctrl-C reaches the service from the terminal too; a SIGTERM to this process only from here.
  const forward = (signal: NodeJS.Signals) => {
    if (service.exitCode === null && service.signalCode === null) service.kill(signal);
  };
  process.on('SIGINT', () => forward('SIGINT'));
  process.on('SIGTERM', () => forward('SIGTERM'));
  service.once('exit', (code, signal) => {
    const stopped = database.embedded ? 'the embedded PostgreSQL stopped' : 'nothing of ours left to stop';
    database
      .stop()
      .then(() => logger.info({ code, signal }, `service ended; ${stopped}`))
      .catch((error: unknown) => logger.error({ err: error }, 'the embedded PostgreSQL did not stop cleanly'))
      .finally(() => process.exit(code ?? (signal === 'SIGINT' || signal === 'SIGTERM' ? 0 : EXIT_SOFTWARE)));
  });
}

main().catch((error: unknown) => {
  localLogger().fatal(`start:local failed: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(EXIT_SOFTWARE);
});
