/**
 * The keyring over a service's life (docs/adr/033): rotation rewraps data
 * keys and everything stays readable once the old key is gone; a missing,
 * malformed or wrong keyring stops start-up naming the key, with nothing
 * recorded and the consumer where it was.
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { Producer } from 'kafkajs';
import { assertServiceBuilt } from './support/built-service';
import { freshSchema, FreshSchema } from './support/fresh-schema';
import { freePort, toolHistoryClient } from './support/grpc-client';
import { connectedProducer, freshTopic, publishEvents, testKafka } from './support/kafka-fixtures';
import { serviceEnvironment, ServiceProcess, spawnService, stopService } from './support/service-harness';
import { uniqueName } from './support/test-environment';
import { writeKeyring } from './support/test-keyring';
import { runCompleted, toolCall, toolResult } from './support/tool-event-factory';
import { waitFor } from './support/wait-for';

const CLI = resolve(__dirname, '../dist/apps/toolhistory/src/cli.js');
const EXIT_CONFIG = 78;

describe('the keyring: rotation, and start-up refused on a wrong one with nothing advanced', () => {
  let producer: Producer;
  let topic: string;
  let db: FreshSchema;
  let dir: string;
  let port: number;
  const groupId = uniqueName('g');
  const k1 = randomBytes(32);
  const k2 = randomBytes(32);
  const tenantId = uniqueName('tenant');
  const runOf = (conversationId: string, secret: string) => {
    const scope = { tenantId, conversationId, runId: 'r1', channel: 'web' };
    const at = (s: number) => new Date(Date.now() - 10_000 + s * 1000).toISOString();
    return [
      toolCall(scope, { roundIndex: 0, sequenceIndex: 0, toolCallId: 'c1', toolName: 'lookup', arguments: { secret }, occurredAt: at(0) }),
      toolResult(scope, { roundIndex: 0, sequenceIndex: 0, toolCallId: 'c1', result: `found ${secret}`, occurredAt: at(1) }),
      runCompleted(scope, { assistantMessageId: 'm1', finishReason: 'stop', occurredAt: at(2) }),
    ];
  };
  const keyring = (name: string, active: string, keys: Record<string, Buffer>) => writeKeyring(join(dir, name), active, keys);
  const settings = (keyringFile: string) => ({
    topic,
    schema: db.schema,
    groupId,
    env: {
      SERVICE_ROLES: 'recorder,grpc',
      GRPC_PORT: String(port),
      ENCRYPTION_KEYRING_FILE: keyringFile,
      KEYSTORE_URL: `file://${join(dir, 'keystore')}`,
      LOG_LEVEL: 'info',
    },
  });
  const serving = async (keyringFile: string): Promise<ServiceProcess> => {
    const service = spawnService(settings(keyringFile));
    const health = toolHistoryClient(port);
    try {
      await waitFor(
        () => health.healthCheck().catch(() => 'DOWN'),
        (s) => s === 'SERVING',
        { what: `health SERVING (${service.output().slice(-400)})`, timeoutMs: 60_000 },
      );
    } finally {
      health.close();
    }
    return service;
  };
  const refused = async (keyringFile: string) => {
    const service = spawnService(settings(keyringFile));
    const exited = await Promise.race([service.exited, new Promise<null>((done) => setTimeout(() => done(null), 60_000))]);
    if (exited === null) await stopService(service, 'SIGKILL');
    return { code: exited?.code ?? null, output: service.output() };
  };
  const replayText = async (conversationId: string) => {
    const client = toolHistoryClient(port);
    try {
      return JSON.stringify(await client.getReplayHistory({ tenant_id: tenantId, conversation_id: conversationId }));
    } finally {
      client.close();
    }
  };
  const recorded = async () => {
    const { rows } = await db.pool.query<{ events: number; offsets: string }>(
      `SELECT (SELECT count(*)::int FROM events) AS events,
              (SELECT coalesce(string_agg(partition || ':' || next_offset, ',' ORDER BY partition), '') FROM consumer_offsets) AS offsets`,
    );
    return rows[0];
  };
  const cli = (args: string[], keyringFile: string) =>
    new Promise<{ code: number; stdout: string; stderr: string }>((done) =>
      execFile(
        process.execPath,
        [CLI, ...args],
        { env: { PATH: process.env.PATH ?? '', ...serviceEnvironment(settings(keyringFile)) } },
        (error, stdout, stderr) => done({ code: error ? Number((error as { code?: number }).code ?? 1) : 0, stdout, stderr }),
      ),
    );

  beforeAll(async () => {
    assertServiceBuilt();
    const kafka = testKafka();
    db = await freshSchema('keys');
    ({ topic } = await freshTopic(kafka, 3));
    producer = await connectedProducer(kafka);
    dir = mkdtempSync(join(tmpdir(), 'toolhistory-keyring-'));
    port = await freePort();
  });

  afterAll(async () => {
    await producer?.disconnect();
    await db?.drop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('rotates: data keys rewrapped by the new key, the old key removed, everything recorded before still readable', async () => {
    const first = await serving(keyring('k1.json', 'k1', { k1 }));
    await publishEvents(producer, topic, runOf('before', 'tern-3141'));
    await waitFor(
      () => replayText('before'),
      (t) => t.includes('tern-3141'),
      { what: 'the first conversation replayed' },
    );
    await stopService(first);

    const rotated = await cli(['keys', 'rotate'], keyring('both.json', 'k2', { k1, k2 }));
    expect(rotated).toMatchObject({ code: 0 });
    expect(rotated.stdout).toContain('rewrapped 1 data key(s) with k2');
    expect(rotated.stdout).toContain('no data key needs k1 any more');

    const second = await serving(keyring('k2.json', 'k2', { k2 }));
    try {
      expect(await replayText('before')).toContain('tern-3141');
      await publishEvents(producer, topic, runOf('after', 'plover-2718'));
      await waitFor(
        () => replayText('after'),
        (t) => t.includes('plover-2718'),
        { what: 'a conversation recorded after the rotation' },
      );
      const status = await cli(['retention', 'status'], join(dir, 'k2.json'));
      expect(status).toMatchObject({ code: 0 });
      expect(status.stdout).toContain('data keys: 2 wrapped by k2');
    } finally {
      await stopService(second);
    }
  });

  it('refuses to start with a wrong, missing or malformed keyring, naming the key, and records nothing meanwhile', async () => {
    const before = await recorded();
    await publishEvents(producer, topic, runOf('waiting', 'avocet-1618'));

    const wrong = await refused(keyring('wrong.json', 'k2', { k2: randomBytes(32) }));
    expect(wrong.code).toBe(EXIT_CONFIG);
    expect(wrong.output).toContain('key k2 is not the key k2 that wrapped');
    const missing = await refused(keyring('k3.json', 'k3', { k3: randomBytes(32) }));
    expect(missing.code).toBe(EXIT_CONFIG);
    expect(missing.output).toContain('key k2 wraps 2 data key(s) in the key store but is not in the keyring');
    const malformedFile = join(dir, 'malformed.json');
    writeFileSync(malformedFile, JSON.stringify({ active: 'k2', keys: { k2: randomBytes(16).toString('base64') } }));
    const malformed = await refused(malformedFile);
    expect(malformed.code).toBe(EXIT_CONFIG);
    expect(malformed.output).toContain('key k2 must be 32 bytes in base64 (it holds 16)');
    const absent = await refused(join(dir, 'absent.json'));
    expect(absent.code).toBe(EXIT_CONFIG);
    expect(absent.output).toContain('ENCRYPTION_KEYRING_FILE: cannot read');
    // Nothing was recorded, and the consumer did not move: the events wait in the topic.
    expect(await recorded()).toEqual(before);

    const right = await serving(join(dir, 'k2.json'));
    try {
      await waitFor(
        () => replayText('waiting'),
        (t) => t.includes('avocet-1618'),
        { what: 'the waiting events recorded with the right keyring' },
      );
    } finally {
      await stopService(right);
    }
  });

  it('is secure by default: without a keyring it does not start; ENCRYPTION_AT_REST=off starts, says so, and stores payloads in clear', async () => {
    const unset = { ...settings(''), env: { ...settings('').env, ENCRYPTION_KEYRING_FILE: '', KEYSTORE_URL: '' } };
    const bare = spawnService(unset);
    expect((await bare.exited).code).toBe(EXIT_CONFIG);
    expect(bare.output()).toContain('ENCRYPTION_KEYRING_FILE is required while ENCRYPTION_AT_REST is on (the default)');

    const db2 = await freshSchema('clear');
    const off = spawnService({ ...unset, schema: db2.schema, groupId: uniqueName('g'), env: { ...unset.env, ENCRYPTION_AT_REST: 'off' } });
    try {
      await publishEvents(producer, topic, runOf('in-clear', 'dunlin-1414'));
      await waitFor(
        () => db2.pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM events WHERE payload::text LIKE '%dunlin-1414%'`),
        (r) => r.rows[0].n === 2,
        { what: 'the payloads recorded in clear' },
      );
      expect(off.output()).toContain('ENCRYPTION_AT_REST=off: payloads rest in clear');
    } finally {
      await stopService(off);
      await db2.drop();
    }
  });
});
