/**
 * `npm run start:local`: the whole service on a developer's machine with
 * nothing set up by hand. It starts the project's Kafka broker unless
 * KAFKA_BROKERS names one, opens a database (DATABASE_URL; else a local
 * PostgreSQL that lets `postgres` in without a password; else an embedded
 * PostgreSQL under .cache/postgres), makes a keyring and a key store of
 * its own under .cache/local unless the environment names them (payloads
 * rest sealed, as by default), runs the built service with every role,
 * and, when the service ends, stops the embedded database it started.
 */
import { spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
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
  Object.assign(env, localEncryption(root, env, logger));
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

/**
 * Encryption at rest on a developer's machine: a keyring (one random key,
 * made once, readable by this user only) and a key store directory under
 * .cache/local, unless ENCRYPTION_AT_REST, ENCRYPTION_KEYRING_FILE or
 * KEYSTORE_URL say otherwise.
 */
function localEncryption(root: string, env: NodeJS.ProcessEnv, logger: ReturnType<typeof localLogger>): NodeJS.ProcessEnv {
  if (env.ENCRYPTION_AT_REST === 'off' || env.ENCRYPTION_KEYRING_FILE || env.KEYSTORE_URL) return {};
  const directory = join(root, '.cache', 'local');
  mkdirSync(directory, { recursive: true, mode: 0o700 });
  const keyring = join(directory, 'keyring.json');
  try {
    writeFileSync(keyring, JSON.stringify({ active: 'local-1', keys: { 'local-1': randomBytes(32).toString('base64') } }), {
      mode: 0o600,
      flag: 'wx',
    });
    logger.info('encryption at rest: made a keyring of its own in .cache/local/keyring.json');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  }
  const keyStore = join(directory, 'keystore');
  logger.info('encryption at rest: keyring .cache/local/keyring.json, key store .cache/local/keystore');
  return { ENCRYPTION_KEYRING_FILE: keyring, KEYSTORE_URL: `file://${keyStore}` };
}

main().catch((error: unknown) => {
  localLogger().fatal(`start:local failed: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(EXIT_SOFTWARE);
});
