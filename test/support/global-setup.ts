import { spawnSync } from 'node:child_process';
import { createConnection } from 'node:net';
import { resolve } from 'node:path';
import { ensureDatabase } from '../../libs/persistence/src/database';
import { TEST_DATABASE_URL, TEST_KAFKA_BROKERS } from './test-environment';

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
 * Runs once per tier before its test files: starts the project's local Kafka
 * broker when none answers, and creates the test database.
 */
export default async function globalSetup(): Promise<void> {
  if (!(await reachable(TEST_KAFKA_BROKERS[0]))) {
    const script = resolve(__dirname, '../../scripts/kafka-broker.sh');
    const started = spawnSync('bash', [script, 'start'], { stdio: 'inherit' });
    if (started.status !== 0) throw new Error('could not start the local Kafka broker (scripts/kafka-broker.sh start)');
  }
  await ensureDatabase(TEST_DATABASE_URL);
}
