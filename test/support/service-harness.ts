import { ChildProcess, spawn } from 'node:child_process';
import { resolve } from 'node:path';
import pino from 'pino';
import { RunningService, startService } from '../../apps/toolhistory/src/bootstrap';
import { loadConfig } from '../../libs/config/src';
import { TEST_DATABASE_URL, TEST_KAFKA_BROKERS } from './test-environment';
import { testEncryptionEnvironment } from './test-keyring';

export interface ServiceSettings {
  topic: string;
  schema: string;
  groupId: string;
  databaseUrl?: string;
  env?: Record<string, string>;
}

export function serviceEnvironment(settings: ServiceSettings): Record<string, string> {
  return {
    KAFKA_BROKERS: TEST_KAFKA_BROKERS.join(','),
    KAFKA_GROUP_ID: settings.groupId,
    TOOL_EVENTS_TOPIC: settings.topic,
    TOOL_EVENTS_PARTITIONS: '3',
    DATABASE_URL: settings.databaseUrl ?? TEST_DATABASE_URL,
    DATABASE_SCHEMA: settings.schema,
    SERVICE_ROLES: 'recorder',
    // Services of parallel test files must not share a port; a test that scrapes sets its own.
    HTTP_PORT: '0',
    LOG_LEVEL: process.env.TEST_SERVICE_LOG_LEVEL ?? 'error',
    // Payloads rest sealed, as by default: the tests' keyring, a key store of the schema's.
    ...testEncryptionEnvironment(settings.schema),
    ...settings.env,
  };
}

/** The service in this process (integration tier): same wiring as main.ts. */
export async function startInProcess(settings: ServiceSettings): Promise<RunningService> {
  const env = serviceEnvironment(settings);
  const config = loadConfig(env);
  return startService(config, pino({ level: env.LOG_LEVEL ?? 'warn' }));
}

export interface ServiceProcess {
  child: ChildProcess;
  output: () => string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

const MAIN = resolve(__dirname, '../../dist/apps/toolhistory/src/main.js');

/** The built service as its own process (e2e tier), as `npm start` runs it. */
export function spawnService(settings: ServiceSettings): ServiceProcess {
  const child = spawn(process.execPath, [MAIN], {
    env: { PATH: process.env.PATH ?? '', ...serviceEnvironment(settings) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout?.on('data', (chunk) => (output += chunk));
  child.stderr?.on('data', (chunk) => (output += chunk));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((done) =>
    child.once('exit', (code, signal) => done({ code, signal })),
  );
  return { child, output: () => output, exited };
}

/** Stops a spawned service this test started, by its own pid. */
export async function stopService(service: ServiceProcess, signal: NodeJS.Signals = 'SIGTERM') {
  if (service.child.exitCode === null && service.child.signalCode === null) service.child.kill(signal);
  return service.exited;
}
