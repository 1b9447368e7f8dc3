import { execFile } from 'node:child_process';
import { resolve } from 'node:path';
import type { Kafka, Producer } from 'kafkajs';
import { assertServiceBuilt } from './support/built-service';
import { freshSchema, FreshSchema } from './support/fresh-schema';
import { connectedProducer, freshTopic, publishEvents, testKafka } from './support/kafka-fixtures';
import { type ServiceProcess, serviceEnvironment, spawnService, stopService } from './support/service-harness';
import { uniqueName } from './support/test-environment';
import { runCompleted, toolCall, toolResult } from './support/tool-event-factory';
import { waitFor } from './support/wait-for';

const CLI = resolve(__dirname, '../dist/apps/toolhistory/src/cli.js');

interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
}

interface ListedLetter {
  partition: number;
  offset: string;
  errorCode: string;
  reason: string;
  redriven: boolean;
  value: string | null;
}

describe('the toolhistory command line (real broker, real database)', () => {
  let kafka: Kafka;
  let producer: Producer;
  let db: FreshSchema;
  let service: ServiceProcess;
  let env: Record<string, string>;
  let settings: Parameters<typeof spawnService>[0];
  const tenantId = uniqueName('tenant');
  const conversationId = uniqueName('conv');
  const scope = { tenantId, conversationId, runId: 'r1', channel: 'support' };
  // One moment for the whole file: `recent(-10)` stays before the events however long the tests take.
  const startedAt = Date.now();
  const recent = (s: number) => new Date(startedAt - 60_000 + s * 1000).toISOString();
  const run = [
    toolCall(scope, { roundIndex: 0, sequenceIndex: 0, toolCallId: 'c1', toolName: 'lookup', arguments: { id: 7 }, occurredAt: recent(0) }),
    toolResult(scope, { roundIndex: 0, sequenceIndex: 0, toolCallId: 'c1', result: { ok: true }, occurredAt: recent(1) }),
    runCompleted(scope, { occurredAt: recent(2) }),
  ];
  // Too large for the first recorder (MAX_EVENT_BYTES=2000): dead-lettered, then redriven once the limit is raised.
  const large = toolCall(
    { ...scope, runId: 'r2' },
    {
      roundIndex: 0,
      sequenceIndex: 0,
      toolCallId: 'big',
      toolName: 'lookup',
      arguments: { note: 'x'.repeat(3_000), contact: 'pat@example.org' },
    },
  );

  const cli = (args: string[], extraEnv: Record<string, string> = {}): Promise<CliRun> =>
    new Promise((done) =>
      execFile(process.execPath, [CLI, ...args], { env: { ...env, ...extraEnv } }, (error, stdout, stderr) =>
        done({ code: error ? Number((error as { code?: number }).code ?? 1) : 0, stdout, stderr }),
      ),
    );
  const letters = async (...args: string[]): Promise<ListedLetter[]> => {
    const listed = await cli(['dlq', 'list', '--json', ...args]);
    expect(listed).toMatchObject({ code: 0 });
    return JSON.parse(listed.stdout) as ListedLetter[];
  };

  beforeAll(async () => {
    assertServiceBuilt();
    kafka = testKafka();
    db = await freshSchema('cli');
    const { topic } = await freshTopic(kafka, 3);
    producer = await connectedProducer(kafka);
    settings = { topic, schema: db.schema, groupId: uniqueName('g'), env: { MAX_EVENT_BYTES: '2000' } };
    env = { PATH: process.env.PATH ?? '', ...serviceEnvironment(settings), TOOLHISTORY_OPERATOR: 'ops-tester' };
    service = spawnService(settings);
    await publishEvents(producer, topic, [...run, large]);
    await producer.send({ topic, messages: [{ key: conversationId, value: 'not json' }] });
    await waitFor(
      () => db.pool.query('SELECT count(*)::int AS n FROM events').then((r) => r.rows[0].n),
      (n) => n === run.length,
      { what: 'the valid events recorded' },
    );
  });

  afterAll(async () => {
    if (service) await stopService(service);
    await producer?.disconnect();
    await db?.drop();
  });

  it('lists the dead letters with their place, error code and reason, and filters them', async () => {
    const all = await waitFor(
      () => letters(),
      (l) => l.length === 2,
      { what: 'both dead letters' },
    );
    expect(all.map((l) => l.errorCode).sort()).toEqual(['NOT_JSON', 'OVERSIZE']);
    expect(all.every((l) => !l.redriven)).toBe(true);
    expect(await letters('--code', 'NOT_JSON')).toHaveLength(1);
    expect(await letters('--since', new Date(Date.now() + 60_000).toISOString())).toEqual([]);

    const lines = await cli(['dlq', 'list']);
    expect(lines.code).toBe(0);
    expect(lines.stderr).toContain('2 dead letter(s)');
    expect(lines.stdout.trim().split('\n')).toHaveLength(2);
    expect(lines.stdout).toMatch(/^\d+:\d+ {2}\S+ {2}OVERSIZE {2}from \S+\/\d+\/\d+ {2}.*bytes/m);
  });

  it('shows one letter, redacted, and names what is missing or malformed', async () => {
    const [oversize] = await letters('--code', 'OVERSIZE');
    const shown = await cli(['dlq', 'show', `${oversize.partition}:${oversize.offset}`]);
    expect(shown.code).toBe(0);
    expect(shown.stdout).toContain('"contact": "[REDACTED:email]"');
    expect(shown.stdout).not.toContain('pat@example.org');
    expect(shown.stderr).toContain('values shown and redriven are the redacted ones');

    expect(await cli(['dlq', 'show', '99:0'])).toMatchObject({ code: 66, stderr: expect.stringContaining('no dead letter at 99:0') });
    expect(await cli(['dlq', 'show', 'first'])).toMatchObject({
      code: 64,
      stderr: expect.stringContaining('"first" is not a dead letter\'s place: write partition:offset'),
    });
    expect(await cli(['dlq', 'list', '--since', 'yesterday'])).toMatchObject({
      code: 64,
      stderr: expect.stringContaining('--since "yesterday" is not a time'),
    });
  });

  it('redrives a letter after the fix, once, and says what a dry run would do', async () => {
    expect(await cli(['dlq', 'redrive'])).toMatchObject({ code: 64, stderr: expect.stringContaining('or --all') });
    const dry = await cli(['dlq', 'redrive', '--all', '--dry-run']);
    expect(dry.code).toBe(0);
    expect(dry.stdout).toMatch(/^would redrive 2 to /m);

    // The fix: a recorder that takes larger events.
    await stopService(service);
    service = spawnService({ ...settings, env: {} });
    const [oversize] = await letters('--code', 'OVERSIZE');
    const place = `${oversize.partition}:${oversize.offset}`;
    const redriven = await cli(['dlq', 'redrive', place]);
    expect(redriven).toMatchObject({ code: 0, stdout: expect.stringContaining(`redriven 1 to ${settings.topic}: ${place}`) });
    await waitFor(
      () => db.pool.query(`SELECT payload->'arguments'->>'contact' AS contact FROM events WHERE run_id = 'r2'`).then((r) => r.rows),
      (rows) => rows.length === 1,
      { what: 'the redriven event recorded' },
    );
    const again = await cli(['dlq', 'redrive', place]);
    expect(again).toMatchObject({ code: 0, stdout: expect.stringContaining(`already redriven, not again: ${place}`) });
    expect(again.stdout).toContain('redriven 0 to');
    expect((await letters('--code', 'OVERSIZE'))[0].redriven).toBe(true);
    const { rows } = await db.pool.query('SELECT redriven_by FROM dead_letter_redrives');
    expect(rows).toEqual([{ redriven_by: 'ops-tester' }]);
  });

  it('replays a conversation as the model would get it, with what is left out and why', async () => {
    const text = await cli(['replay', tenantId, conversationId]);
    expect(text.code).toBe(0);
    expect(text.stdout).toContain('# run r1');
    expect(text.stdout).toContain('"tool_calls"');
    // r2 (the redriven call) has no result and its run never ended.
    expect(text.stdout).toMatch(/^run r2 round 0 call 0 lookup \(big\): run_incomplete$/m);
    const json = JSON.parse((await cli(['replay', tenantId, conversationId, '--format', 'anthropic', '--json'])).stdout);
    expect(json.turns.map((t: { runId: string }) => t.runId)).toEqual(['r1']);
    expect(json.turns[0].messages[0]).toMatchObject({ role: 'assistant' });
    const before = JSON.parse((await cli(['replay', tenantId, conversationId, '--as-of', recent(-10), '--json'])).stdout);
    expect(before.turns).toEqual([]);
    const gemini = JSON.parse((await cli(['replay', tenantId, conversationId, '--format', 'gemini', '--json'])).stdout);
    expect(gemini.turns[0].messages[0]).toMatchObject({ role: 'model' });
    expect(await cli(['replay', tenantId, conversationId, '--format', 'cohere'])).toMatchObject({ code: 64 });
  });

  it('forks a conversation at a message into a new one, printing its consistency token', async () => {
    const fork = uniqueName('fork');
    const forked = await cli(['fork', tenantId, conversationId, '--up-to', 'msg_r1', '--to', fork]);
    expect(forked).toMatchObject({ code: 0, stderr: expect.stringContaining(`into ${fork}: 1 invocation(s)`) });
    expect(forked.stdout.trim()).toMatch(/^ct1:p:\d+$/);
    const replayed = JSON.parse((await cli(['replay', tenantId, fork, '--json'])).stdout);
    expect(replayed.turns.map((t: { runId: string }) => t.runId)).toEqual(['r1']);
    expect(await cli(['fork', tenantId, conversationId, '--up-to', 'msg_r1'])).toMatchObject({
      code: 64,
      stderr: expect.stringContaining('--to'),
    });
    expect(await cli(['fork', tenantId, conversationId, '--up-to', 'no-such', '--to', uniqueName('fork')])).toMatchObject({
      code: 66,
      stderr: expect.stringContaining('"no-such" is not a message of the conversation'),
    });
  });

  it('erases only when told --yes, and migrates', async () => {
    expect(await cli(['erase', tenantId, conversationId])).toMatchObject({ code: 64, stderr: expect.stringContaining('add --yes') });
    const erased = await cli(['erase', tenantId, conversationId, '--yes']);
    expect(erased).toMatchObject({
      code: 0,
      stdout: expect.stringContaining(`erased ${tenantId}/${conversationId}: 4 event(s), 2 invocation(s)`),
    });
    expect(JSON.parse((await cli(['replay', tenantId, conversationId, '--json'])).stdout).turns).toEqual([]);
    expect(await cli(['migrate'])).toMatchObject({ code: 0, stdout: expect.stringContaining('schema is up to date') });
  });

  it('stops on a bad setting with EX_CONFIG, naming it', async () => {
    expect(await cli(['migrate'], { GRPC_PORT: 'http' })).toMatchObject({ code: 78, stderr: expect.stringContaining('GRPC_PORT') });
  });
});
