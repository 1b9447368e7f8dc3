import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Kafka, logLevel, Partitioners, type Producer } from 'kafkajs';
import { assertServiceBuilt } from './support/built-service';
import { freshSchema, type FreshSchema } from './support/fresh-schema';
import { freePort } from './support/grpc-client';
import { type ServiceProcess, spawnService, stopService } from './support/service-harness';
import { uniqueName } from './support/test-environment';
import { agentTraffic } from './support/traffic';
import { countRows } from './support/read-model-queries';
import { waitFor } from './support/wait-for';

const ROOT = resolve(__dirname, '..');
const SCRIPT = join(ROOT, 'scripts/kafka-broker.sh');

/**
 * A broker of its own, started by the project's script with a SASL_SSL
 * listener (its own CA and SCRAM user), so the service is proven to record
 * through TLS and SCRAM as it would against a managed cluster.
 */
describe('recording through a SASL_SSL listener (SCRAM-SHA-512 over TLS)', () => {
  let home: string;
  let brokerEnv: Record<string, string>;
  let saslBroker: string;
  let producer: Producer;
  let db: FreshSchema;
  let password: string;

  const broker = (command: 'start' | 'stop') => {
    const run = spawnSync('bash', [SCRIPT, command], { env: { ...process.env, ...brokerEnv }, encoding: 'utf8', timeout: 180_000 });
    if (run.status !== 0) throw new Error(`kafka-broker.sh ${command} failed:\n${run.stdout}\n${run.stderr}`);
  };

  beforeAll(async () => {
    assertServiceBuilt();
    home = mkdtempSync(join(tmpdir(), 'toolhistory-kafka-sasl-'));
    const [port, controllerPort, saslPort] = [await freePort(), await freePort(), await freePort()];
    brokerEnv = {
      KAFKA_HOME_DIR: home,
      KAFKA_PORT: String(port),
      KAFKA_CONTROLLER_PORT: String(controllerPort),
      KAFKA_SASL_SSL_PORT: String(saslPort),
      KAFKA_LIBS_DIR: join(ROOT, '.cache/kafka/libs'),
      KAFKA_HEAP: '512m',
    };
    broker('start');
    saslBroker = `127.0.0.1:${saslPort}`;
    password = readFileSync(join(home, 'tls/sasl-password'), 'utf8').trim();
    const kafka = new Kafka({
      clientId: 'sasl-test',
      brokers: [saslBroker],
      ssl: { ca: [readFileSync(join(home, 'tls/ca.pem'))] },
      sasl: { mechanism: 'scram-sha-256', username: 'toolhistory', password },
      logLevel: logLevel.NOTHING,
    });
    producer = kafka.producer({ createPartitioner: Partitioners.DefaultPartitioner });
    await producer.connect();
    db = await freshSchema('sasl');
  }, 240_000);

  afterAll(async () => {
    await producer?.disconnect();
    await db?.drop();
    if (brokerEnv) broker('stop');
    if (home) rmSync(home, { recursive: true, force: true });
  });

  const serviceEnv = (overrides: Record<string, string> = {}) => ({
    KAFKA_BROKERS: saslBroker,
    KAFKA_SSL: 'true',
    KAFKA_SSL_CA_FILE: join(home, 'tls/ca.pem'),
    KAFKA_SASL_MECHANISM: 'scram-sha-512',
    KAFKA_SASL_USERNAME: 'toolhistory',
    KAFKA_SASL_PASSWORD_FILE: join(home, 'tls/sasl-password'),
    LOG_LEVEL: 'info',
    ...overrides,
  });

  it('records every event, and never writes the password', async () => {
    const topic = uniqueName('sasl-events').replace(/_/g, '-');
    const service: ServiceProcess = spawnService({ topic, schema: db.schema, groupId: uniqueName('g'), env: serviceEnv() });
    try {
      await waitFor(
        async () => service.output(),
        (out) => out.includes('recorder started') || service.child.exitCode !== null,
        {
          what: 'the recorder to start',
          timeoutMs: 60_000,
        },
      );
      expect(service.output()).toContain('recorder started');
      const events = [...agentTraffic(300, { seed: 5 })];
      await producer.send({ topic, messages: events.map((e) => ({ key: e.conversationId, value: JSON.stringify(e) })) });
      await waitFor(
        () => countRows(db.pool, 'events'),
        (n) => n === new Set(events.map((e) => e.eventId)).size,
        { what: 'every event recorded through SASL_SSL', timeoutMs: 60_000 },
      );
    } finally {
      expect(await stopService(service)).toEqual({ code: 0, signal: null });
    }
    expect(service.output()).not.toContain(password);
  });

  it('stops start-up on a wrong password, saying which setting to check (exit 78)', async () => {
    const service = spawnService({
      topic: uniqueName('unused'),
      schema: db.schema,
      groupId: uniqueName('g'),
      env: serviceEnv({ KAFKA_SASL_PASSWORD_FILE: '', KAFKA_SASL_PASSWORD: 'not-the-password' }),
    });
    const exit = await service.exited;
    expect(exit.code).toBe(78);
    expect(service.output()).toContain(
      'Kafka refused the credentials of user \\"toolhistory\\" with SCRAM-SHA-512: check KAFKA_SASL_USERNAME and KAFKA_SASL_PASSWORD (or KAFKA_SASL_PASSWORD_FILE)',
    );
    expect(service.output()).not.toContain('not-the-password');
  });

  it('stops start-up when the broker certificate is not trusted, naming KAFKA_SSL_CA_FILE (exit 78)', async () => {
    const service = spawnService({
      topic: uniqueName('unused'),
      schema: db.schema,
      groupId: uniqueName('g'),
      env: serviceEnv({ KAFKA_SSL_CA_FILE: '' }),
    });
    const exit = await service.exited;
    expect(exit.code).toBe(78);
    expect(service.output()).toMatch(
      /the Kafka broker's TLS certificate is not trusted \([^)]+\): set KAFKA_SSL_CA_FILE to the CA that signed it/,
    );
  });
});
