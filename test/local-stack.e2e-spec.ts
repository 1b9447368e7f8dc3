import { type ChildProcess, spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { Producer } from 'kafkajs';
import { Client } from 'pg';
import { freePort, toolHistoryClient } from './support/grpc-client';
import { connectedProducer, freshTopic, publishEvents, testKafka } from './support/kafka-fixtures';
import { TEST_KAFKA_BROKERS, uniqueName } from './support/test-environment';
import { runCompleted, toolCall, toolResult } from './support/tool-event-factory';
import { waitFor } from './support/wait-for';
import { answersOnLoopback } from './support/listening-sockets';

const LAUNCHER = resolve(__dirname, '../dist/apps/local-stack/src/main.js');

/**
 * `npm run start:local` on a machine with no database: DATABASE_URL unset and
 * nothing on the port where a local PostgreSQL is looked for. The launcher
 * starts an embedded PostgreSQL, the service serves on it, and both stop
 * together.
 */
describe('start:local with no database on the machine', () => {
  let folder: string;
  let launcher: ChildProcess;
  let output = '';
  let exited: Promise<number | null>;
  let producer: Producer;
  let grpcPort: number;
  let httpPort: number;
  let probePort: number;
  let topic: string;

  beforeAll(async () => {
    if (!existsSync(LAUNCHER)) throw new Error(`${LAUNCHER} is missing: run \`npm run build\` before the e2e tests`);
    folder = mkdtempSync(join(tmpdir(), 'toolhistory-start-local-'));
    // As root the embedded cluster runs as the user postgres, which must reach its folder.
    chmodSync(folder, 0o755);
    const kafka = testKafka();
    ({ topic } = await freshTopic(kafka, 3));
    producer = await connectedProducer(kafka);
    [grpcPort, httpPort, probePort] = [await freePort(), await freePort(), await freePort()];
    const env: NodeJS.ProcessEnv = {
      PATH: process.env.PATH ?? '',
      KAFKA_BROKERS: TEST_KAFKA_BROKERS.join(','),
      TOOL_EVENTS_TOPIC: topic,
      TOOL_EVENTS_PARTITIONS: '3',
      KAFKA_GROUP_ID: uniqueName('g'),
      GRPC_PORT: String(grpcPort),
      HTTP_PORT: String(httpPort),
      LOCAL_POSTGRES_PORT: String(probePort),
      EMBEDDED_POSTGRES_DIR: folder,
    };
    launcher = spawn(process.execPath, [LAUNCHER], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    launcher.stdout?.on('data', (chunk) => (output += chunk));
    launcher.stderr?.on('data', (chunk) => (output += chunk));
    exited = new Promise((done) => launcher.once('exit', (code) => done(code)));
  });

  afterAll(async () => {
    if (launcher.exitCode === null && launcher.signalCode === null) launcher.kill('SIGTERM');
    await exited;
    await producer?.disconnect();
    rmSync(folder, { recursive: true, force: true });
  });

  const embeddedPort = () => Number(/started an embedded PostgreSQL on 127\.0\.0\.1:(\d+)/.exec(output)?.[1]);

  it('starts an embedded PostgreSQL, says why, and serves on it', async () => {
    const health = toolHistoryClient(grpcPort);
    try {
      await waitFor(
        () => health.healthCheck().catch(() => 'DOWN'),
        (status) => status === 'SERVING',
        { what: `health SERVING (output: ${output.slice(-1_500)})`, timeoutMs: 120_000 },
      );
    } finally {
      health.close();
    }
    expect(output).toContain(
      `database: DATABASE_URL is not set and no PostgreSQL answers on 127.0.0.1:${probePort} as postgres without a password (connection refused): ` +
        'started an embedded PostgreSQL on 127.0.0.1:',
    );
    expect(embeddedPort()).toBeGreaterThan(0);
    expect(embeddedPort()).not.toBe(probePort);
  });

  it('records and replays a run, with the events resting in the embedded database', async () => {
    const conversationId = uniqueName('conv');
    const scope = { tenantId: 'acme', conversationId, runId: uniqueName('run'), channel: 'web' };
    // Now, so the result is within the default freshness window when replayed.
    const at = (ms: number) => new Date(Date.now() + ms).toISOString();
    await publishEvents(producer, topic, [
      toolCall(scope, {
        roundIndex: 0,
        sequenceIndex: 0,
        toolCallId: 'c1',
        toolName: 'get_weather',
        arguments: { city: 'Oslo' },
        occurredAt: at(0),
      }),
      toolResult(scope, { roundIndex: 0, sequenceIndex: 0, toolCallId: 'c1', result: { celsius: 4 }, occurredAt: at(1) }),
      runCompleted(scope, { occurredAt: at(2) }),
    ]);
    const client = toolHistoryClient(grpcPort);
    try {
      const replay = await waitFor(
        () => client.getReplayHistory({ tenant_id: 'acme', conversation_id: conversationId }),
        (r) => r.turns.length === 1,
        { what: 'the run replayed' },
      );
      expect(replay.turns[0].rounds[0].calls[0].tool_name).toBe('get_weather');
    } finally {
      client.close();
    }
    const password = readFileSync(join(folder, 'local', 'password'), 'utf8').trim();
    const db = new Client({ host: '127.0.0.1', port: embeddedPort(), user: 'postgres', password, database: 'toolhistory' });
    await db.connect();
    try {
      const { rows } = await db.query<{ n: string }>('SELECT count(*) AS n FROM events WHERE conversation_id = $1', [conversationId]);
      expect(Number(rows[0].n)).toBe(3);
    } finally {
      await db.end();
    }
  });

  it("runs the service on the launcher's Node.js", async () => {
    const metrics = await (await fetch(`http://127.0.0.1:${httpPort}/metrics`)).text();
    expect(metrics).toMatch(new RegExp(`nodejs_version_info\\{version="${process.version.replace(/\./g, '\\.')}"`));
  });

  it('stops the embedded PostgreSQL with the service', async () => {
    const port = embeddedPort();
    expect(await answersOnLoopback(port)).toBe(true);
    launcher.kill('SIGTERM');
    expect(await exited).toBe(0);
    expect(output).toContain('service ended; the embedded PostgreSQL stopped');
    expect(await answersOnLoopback(port)).toBe(false);
  });
});
