import { fork } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join, resolve } from 'node:path';
import type { KeeperMessage, KeeperRequest } from './keeper-protocol';

export interface EmbeddedPostgres {
  port: number;
  /** Holds the password of the user postgres; the URL of `urlFor` carries it too. */
  passwordFile: string;
  logFile: string;
  /** The URL of a database on the cluster, as postgres with its password. */
  urlFor(database: string, options?: { withPassword?: boolean }): string;
  /** Stops the cluster and waits until it has stopped. */
  stop(): Promise<void>;
}

const START_TIMEOUT_MS = 120_000;

/**
 * Starts an embedded PostgreSQL on a free loopback port with its data in
 * `directory`, kept by a detached process of its own (embedded-postgres-keeper)
 * that stops it when `stop()` is called or this process goes away.
 */
export async function startEmbeddedPostgres(directory: string): Promise<EmbeddedPostgres> {
  const port = await freeLoopbackPort();
  const keeper = fork(keeperScript(), [], { detached: true, execArgv: [], stdio: ['ignore', 'ignore', 'inherit', 'ipc'] });
  const first = new Promise<KeeperMessage>((done, fail) => {
    const timer = setTimeout(
      () => fail(new Error(`the embedded PostgreSQL did not start within ${START_TIMEOUT_MS / 1000} s`)),
      START_TIMEOUT_MS,
    );
    keeper.once('message', (message: KeeperMessage) => {
      clearTimeout(timer);
      done(message);
    });
    keeper.once('exit', (code) => {
      clearTimeout(timer);
      fail(new Error(`the embedded PostgreSQL's keeper ended during start-up (exit code ${code})`));
    });
  });
  keeper.send({ directory: resolve(directory), port } satisfies KeeperRequest);
  const answer = await first.catch((error: unknown) => {
    keeper.kill('SIGTERM');
    throw error;
  });
  if (answer.kind !== 'ready') {
    throw new Error(
      answer.kind === 'failed' ? `the embedded PostgreSQL did not start: ${answer.reason}` : 'the embedded PostgreSQL stopped at once',
    );
  }
  // The keeper stays linked by its IPC channel only: this process may end without waiting for it.
  keeper.unref();
  keeper.channel?.unref();
  const password = readFileSync(answer.passwordFile, 'utf8').trim();
  let stopped: Promise<void> | null = null;
  return {
    port,
    passwordFile: answer.passwordFile,
    logFile: answer.logFile,
    urlFor(database, options = {}) {
      const url = new URL(`postgres://postgres@127.0.0.1:${port}/${encodeURIComponent(database)}`);
      if (options.withPassword ?? true) url.password = encodeURIComponent(password);
      return url.toString();
    },
    stop() {
      stopped ??= new Promise<void>((done) => {
        if (keeper.exitCode !== null || !keeper.connected) return done();
        keeper.ref();
        keeper.channel?.ref();
        keeper.once('exit', () => done());
        keeper.send({ kind: 'stop' });
      });
      return stopped;
    },
  };
}

/** The compiled keeper beside this file, or, when this file runs from source (the tests), the one the build made. */
function keeperScript(): string {
  const compiled = __filename.endsWith('.ts') ? resolve(__dirname, '../../../dist/libs/local-database/src') : __dirname;
  const script = join(compiled, 'embedded-postgres-keeper.js');
  if (!existsSync(script)) throw new Error(`${script} is missing: run \`npm run build\` first`);
  return script;
}

/** A port the operating system had free on 127.0.0.1 a moment ago. */
export function freeLoopbackPort(): Promise<number> {
  return new Promise((done, fail) => {
    const server = createServer();
    server.once('error', fail);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address ? done(address.port) : fail(new Error('no port'))));
    });
  });
}
