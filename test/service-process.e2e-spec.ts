import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Kafka, Producer } from 'kafkajs';
import { assertServiceBuilt } from './support/built-service';
import { freshSchema, FreshSchema } from './support/fresh-schema';
import { connectedProducer, freshTopic, publishEvents, testKafka } from './support/kafka-fixtures';
import { countRows } from './support/read-model-queries';
import { spawnService, stopService } from './support/service-harness';
import { uniqueName } from './support/test-environment';
import { agentTraffic } from './support/traffic';
import { waitFor } from './support/wait-for';

describe('the service as a process', () => {
  let kafka: Kafka;
  let producer: Producer;
  let db: FreshSchema;
  let topic: string;

  beforeAll(async () => {
    assertServiceBuilt();
    kafka = testKafka();
    db = await freshSchema('process');
    ({ topic } = await freshTopic(kafka, 3));
    producer = await connectedProducer(kafka);
  });

  afterAll(async () => {
    await producer.disconnect();
    await db.drop();
  });

  it('refuses to start on invalid configuration, listing every problem', async () => {
    const child = spawn(process.execPath, [join(__dirname, '../dist/apps/toolhistory/src/main.js')], {
      env: { PATH: process.env.PATH ?? '', KAFKA_BROKERS: 'nohost', GRPC_PORT: 'http', SERVICE_ROLES: 'everything' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (c) => (stderr += c));
    const code = await new Promise<number | null>((done) => child.once('exit', done));
    expect(code).toBe(78);
    expect(stderr).toMatch(/invalid configuration/);
    for (const name of ['KAFKA_BROKERS', 'GRPC_PORT', 'SERVICE_ROLES']) expect(stderr).toContain(name);
  });

  it('refuses to start on an invalid policy file, naming the rule', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'toolhistory-policy-'));
    const policyFile = join(dir, 'policy.json');
    writeFileSync(
      policyFile,
      JSON.stringify({
        channels: { web: { visibility: 'sometimes' } },
        tools: { search: { freshnesSeconds: 5 }, cancel_order: { invalidates: [{ tool: 'get_order', match: { orderId: '$.id' } }] } },
      }),
    );
    const service = spawnService({
      topic,
      schema: db.schema,
      groupId: uniqueName('g'),
      env: { POLICY_FILE: policyFile, LOG_LEVEL: 'info' },
    });
    const exit = await service.exited;
    expect(exit.code).toBe(78);
    expect(service.output()).toContain('channels.web.visibility: must be one of per_run, per_service_call');
    expect(service.output()).toContain('tools.search.freshnesSeconds: unknown key');
    // The log line is JSON, so the quotes of this message are escaped in it: read the message itself.
    const fatal = service
      .output()
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as { level: string; msg: string })
      .find((line) => line.level === 'fatal');
    expect(fatal?.msg).toContain('tools.cancel_order.invalidates[0].match["orderId"]: key "orderId" must start with $');
  });

  it('with SERVICE_ROLES=grpc does not consume events', async () => {
    const groupId = uniqueName('g');
    const service = spawnService({ topic, schema: db.schema, groupId, env: { SERVICE_ROLES: 'grpc', LOG_LEVEL: 'info' } });
    try {
      await waitFor(
        async () => service.output(),
        (out) => out.includes('toolhistory started'),
        { what: 'start-up' },
      );
      const [event] = [...agentTraffic(1, { seed: 3 })];
      await publishEvents(producer, topic, [event]);
      await new Promise((r) => setTimeout(r, 3_000));
      expect(await countRows(db.pool, 'events')).toBe(0);
      const admin = kafka.admin();
      await admin.connect();
      const groups = await admin.listGroups();
      await admin.disconnect();
      expect(groups.groups.map((g) => g.groupId)).not.toContain(groupId);
    } finally {
      expect(await stopService(service)).toEqual({ code: 0, signal: null });
    }
  });

  it('on SIGTERM finishes or rolls back the batch in hand, exits 0, and loses or doubles nothing', async () => {
    const groupId = uniqueName('g');
    ({ topic } = await freshTopic(kafka, 3));
    const events = [...agentTraffic(6_000, { seed: 11 })];
    const eventIds = new Set(events.map((e) => e.eventId));
    const first = spawnService({ topic, schema: db.schema, groupId, env: { LOG_LEVEL: 'info' } });
    const before = await countRows(db.pool, 'events');
    for (let i = 0; i < events.length; i += 500) await publishEvents(producer, topic, events.slice(i, i + 500));
    await waitFor(
      () => countRows(db.pool, 'events'),
      (n) => n > before,
      { what: 'recording to begin' },
    );
    const exit = await stopService(first, 'SIGTERM');
    expect(exit).toEqual({ code: 0, signal: null });
    expect(first.output()).toMatch(/recorder stopped/);

    const second = spawnService({ topic, schema: db.schema, groupId });
    try {
      await waitFor(
        () => countRows(db.pool, 'events'),
        (n) => n >= before + eventIds.size,
        { what: 'every event', timeoutMs: 90_000 },
      );
      await new Promise((r) => setTimeout(r, 1_000));
      expect(await countRows(db.pool, 'events')).toBe(before + eventIds.size);
    } finally {
      await stopService(second);
    }
  });
});
