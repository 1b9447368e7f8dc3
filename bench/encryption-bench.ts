/**
 * Encryption at rest and retention (docs/adr/033), measured in one run:
 *
 *   npm run bench:encryption -- [--part all|ingest|replay|sweep] [--events 30000] [--rounds 2]
 *                               [--turns 40] [--clients 16] [--seconds 5] [--blocks 4] [--cache off|on]
 *                               [--payloads 1000000] [--keep]
 *
 * - ingest: a topic pre-loaded with --events of the bench traffic is
 *   recorded from its beginning by the service (recorder role) with
 *   encryption off, then on, --rounds times alternating, each with a fresh
 *   consumer group and schema. Per run: events/s from the group's join to the
 *   last offset committed, and the recorder process's CPU per 1,000 events
 *   (the figure to compare on a shared machine, where wall-clock swings).
 * - replay: one conversation of --turns completed runs (2 rounds x 2 calls,
 *   results ~1 KB) recorded into two schemas by two services, one with
 *   encryption off, one on, both serving gRPC; then --blocks blocks of
 *   --seconds of closed-loop GetReplayHistory with --clients callers,
 *   alternating between the two. With --cache off (the default) the replay
 *   cache is disabled, so every request reads the conversation and (on)
 *   opens its payloads: the worst case. Per mode: requests/s, p50/p99 and
 *   the gRPC process's CPU per request.
 * - sweep: --payloads expired payloads (arguments and results of half as
 *   many invocations, across 10,000 conversations, with their search
 *   documents and one data key per conversation in the PostgreSQL key store)
 *   seeded with SQL, then one sweep: the read model and search, then the
 *   keys. Reports seconds and payloads per second of each part.
 *
 * Prints the load average with the figures. The last line is one JSON object.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { loadavg } from 'node:os';
import { resolve } from 'node:path';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import { type Admin, Kafka, Partitioners } from 'kafkajs';
import type { Pool } from 'pg';
import type { ToolEvent } from '../libs/contract/src';
import { EnvelopeVault, FileKeyring } from '../libs/encryption/src';
import {
  createPool,
  dropSchema,
  ensureDatabase,
  migrateKeyStore,
  PostgresDataKeyStore,
  PostgresPayloadExpiry,
  runMigrations,
} from '../libs/persistence/src';
import { freePort } from '../test/support/grpc-client';
import { agentTraffic } from '../test/support/traffic';
import {
  benchKafka,
  benchDatabaseUrl,
  benchEncryptionEnv,
  benchKeyStoreUrl,
  closedLoopLoad,
  cpuSeconds,
  createBenchTopics,
  intOption,
  machineCpuSeconds,
  parseArgs,
  percentile,
  sleep,
  spawnBenchRecorder,
  stopChild,
} from './bench-support';

const BROKERS = (process.env.BENCH_KAFKA_BROKERS ?? '127.0.0.1:9092').split(',');
const PROTO = resolve(__dirname, '../../proto/toolhistory/v1/toolhistory.proto');
const PARTITIONS = 6;
type Mode = 'off' | 'on';
const round2 = (x: number) => Math.round(x * 100) / 100;
const load = () => loadavg().map((l) => round2(l));

async function committedTotal(pool: Pool): Promise<number> {
  const { rows } = await pool.query<{ n: string | null }>('SELECT sum(next_offset) AS n FROM consumer_offsets WHERE next_offset > 0');
  return Number(rows[0].n ?? 0);
}

async function preload(kafka: Kafka, topic: string, events: Iterable<ToolEvent>): Promise<number> {
  const producer = kafka.producer({ createPartitioner: Partitioners.DefaultPartitioner, allowAutoTopicCreation: false });
  await producer.connect();
  let count = 0;
  try {
    let batch: { key: string; value: string }[] = [];
    const inFlight: Promise<unknown>[] = [];
    for (const event of events) {
      count += 1;
      batch.push({ key: event.conversationId, value: JSON.stringify(event) });
      if (batch.length < 1_000) continue;
      inFlight.push(producer.send({ topic, acks: -1, messages: batch }));
      batch = [];
      if (inFlight.length >= 4) await inFlight.shift();
    }
    if (batch.length > 0) inFlight.push(producer.send({ topic, acks: -1, messages: batch }));
    await Promise.all(inFlight);
  } finally {
    await producer.disconnect();
  }
  return count;
}

interface IngestRun {
  encryption: Mode;
  eventsPerSecond: number;
  seconds: number;
  recorderCpuSeconds: number;
  recorderCpuMsPer1000Events: number;
  load: number[];
}

async function ingestPart(kafka: Kafka, admin: Admin, databaseUrl: string, events: number, rounds: number, keep: boolean) {
  const stamp = Date.now().toString(36);
  const topic = `bench-encryption-${stamp}`;
  await createBenchTopics(admin, topic, PARTITIONS);
  const schemas: string[] = [];
  const runs: IngestRun[] = [];
  try {
    console.log(`ingest: pre-loading ${events} events into ${topic}`);
    await preload(kafka, topic, agentTraffic(events, { seed: 1, duplicateRate: 0.01, conversations: 5_000 }));
    for (let r = 0; r < rounds; r += 1)
      for (const encryption of ['off', 'on'] as const) {
        const schema = `bench_enc_ingest_${stamp}_${r}_${encryption}`;
        schemas.push(schema);
        await runMigrations(databaseUrl, schema);
        const pool = createPool({ url: databaseUrl, schema, poolSize: 1, applicationName: 'toolhistory-bench' });
        const service = spawnBenchRecorder({
          brokers: BROKERS,
          topic,
          groupId: `bench-enc-${schema}`,
          databaseUrl,
          schema,
          env: benchEncryptionEnv(databaseUrl, encryption),
        });
        try {
          const joinedAt = await service.seen('partitions assigned');
          const cpuBefore = cpuSeconds(service.child.pid!);
          while ((await committedTotal(pool)) < events) await sleep(20);
          const seconds = (Date.now() - joinedAt) / 1000;
          const cpu = cpuSeconds(service.child.pid!) - cpuBefore;
          const run = {
            encryption,
            eventsPerSecond: Math.round(events / seconds),
            seconds: round2(seconds),
            recorderCpuSeconds: round2(cpu),
            recorderCpuMsPer1000Events: round2((cpu * 1_000_000) / events),
            load: load(),
          };
          runs.push(run);
          console.log(
            `  encryption ${encryption}: ${run.eventsPerSecond} events/s (${run.seconds} s), recorder CPU ${run.recorderCpuMsPer1000Events} ms per 1,000 events, load ${run.load.join(' ')}`,
          );
        } finally {
          await stopChild(service.child);
          await pool.end();
        }
      }
  } finally {
    if (!keep) {
      await admin.deleteTopics({ topics: [topic, `${topic}.dlq`] }).catch(() => undefined);
      for (const schema of schemas) {
        await dropSchema(databaseUrl, schema).catch(() => undefined);
        await dropSchema(benchKeyStoreUrl(databaseUrl), schema).catch(() => undefined);
      }
    }
  }
  const mean = (mode: Mode, key: 'eventsPerSecond' | 'recorderCpuMsPer1000Events') => {
    const of = runs.filter((r) => r.encryption === mode);
    return round2(of.reduce((sum, r) => sum + r[key], 0) / of.length);
  };
  const summary = {
    events,
    runs,
    eventsPerSecond: { off: mean('off', 'eventsPerSecond'), on: mean('on', 'eventsPerSecond') },
    recorderCpuMsPer1000Events: { off: mean('off', 'recorderCpuMsPer1000Events'), on: mean('on', 'recorderCpuMsPer1000Events') },
  };
  console.log(
    `  mean: off ${summary.eventsPerSecond.off} events/s, ${summary.recorderCpuMsPer1000Events.off} ms CPU per 1,000; on ${summary.eventsPerSecond.on} events/s, ${summary.recorderCpuMsPer1000Events.on} ms CPU per 1,000`,
  );
  return summary;
}

/** `turns` completed runs of 2 rounds x 2 calls, results ~1 KB, all within the freshness window. */
function conversation(turns: number): ToolEvent[] {
  const events: ToolEvent[] = [];
  const start = Date.now() - 200_000;
  let n = 0;
  const at = () => new Date(start + (n += 10)).toISOString();
  const base = { schemaVersion: 2, tenantId: 'bench-tenant', conversationId: 'bench-conversation', channel: 'web' };
  for (let t = 0; t < turns; t += 1) {
    const runId = `run-${t}`;
    for (let r = 0; r < 2; r += 1)
      for (let s = 0; s < 2; s += 1) {
        const toolCallId = `call_${t}_${r}_${s}`;
        events.push({
          ...base,
          eventId: randomUUID(),
          runId,
          occurredAt: at(),
          type: 'ToolCallRequested',
          roundIndex: r,
          sequenceIndex: s,
          toolCallId,
          toolName: 'get_order',
          arguments: { orderId: `A-${t}-${r}-${s}`, note: 'x'.repeat(80) },
        });
        events.push({
          ...base,
          eventId: randomUUID(),
          runId,
          occurredAt: at(),
          type: 'ToolResultReceived',
          roundIndex: r,
          sequenceIndex: s,
          toolCallId,
          isError: false,
          result: {
            status: 'shipped',
            lines: Array.from({ length: 12 }, (_, i) => ({ sku: `SKU-${i}`, qty: i, name: 'kettle and toaster' })),
          },
        });
      }
    events.push({
      ...base,
      eventId: randomUUID(),
      runId,
      occurredAt: at(),
      type: 'RunCompleted',
      assistantMessageId: `m-${t}`,
      finishReason: 'stop',
    });
  }
  return events;
}

async function replayPart(
  kafka: Kafka,
  admin: Admin,
  databaseUrl: string,
  options: { turns: number; clients: number; seconds: number; blocks: number; cache: boolean; keep: boolean },
) {
  const stamp = Date.now().toString(36);
  const definition = protoLoader.loadSync(PROTO, { keepCase: true, longs: String, enums: String, defaults: true, oneofs: true });
  const method = (definition['toolhistory.v1.ToolHistory'] as grpc.ServiceDefinition)['GetReplayHistory'];
  const RawClient = grpc.makeGenericClientConstructor(
    { GetReplayHistory: { ...method, responseDeserialize: (b: Buffer) => b } },
    'ToolHistory',
  );
  const services: Array<{
    mode: Mode;
    topic: string;
    schema: string;
    port: number;
    child: ReturnType<typeof spawnBenchRecorder>;
    clients: grpc.Client[];
  }> = [];
  try {
    for (const mode of ['off', 'on'] as const) {
      const topic = `bench-encryption-replay-${stamp}-${mode}`;
      const schema = `bench_enc_replay_${stamp}_${mode}`;
      await createBenchTopics(admin, topic, PARTITIONS);
      await runMigrations(databaseUrl, schema);
      const port = await freePort();
      const child = spawnBenchRecorder({
        brokers: BROKERS,
        topic,
        groupId: `bench-enc-${schema}`,
        databaseUrl,
        schema,
        env: {
          ...benchEncryptionEnv(databaseUrl, mode),
          SERVICE_ROLES: 'recorder,grpc',
          GRPC_PORT: String(port),
          REPLAY_CACHE_MB: options.cache ? '128' : '0',
        },
      });
      await child.seen('toolhistory started');
      await preload(kafka, topic, conversation(options.turns));
      const clients = Array.from({ length: 4 }, () => new RawClient(`127.0.0.1:${port}`, grpc.credentials.createInsecure()));
      services.push({ mode, topic, schema, port, child, clients });
    }
    const call = (client: grpc.Client) =>
      new Promise<number>((done, fail) =>
        (client as unknown as { GetReplayHistory: (...args: unknown[]) => void }).GetReplayHistory(
          { tenant_id: 'bench-tenant', conversation_id: 'bench-conversation' },
          { deadline: new Date(Date.now() + 5_000) },
          (error: Error | null, bytes: Buffer) => (error ? fail(error) : done(bytes.length)),
        ),
      );
    for (const service of services)
      for (let waited = 0; ; waited += 200) {
        const bytes = await call(service.clients[0]).catch(() => 0);
        if (bytes > 1_000 * options.turns) break;
        if (waited > 120_000) throw new Error(`the conversation did not become replayable with encryption ${service.mode}`);
        await sleep(200);
      }
    console.log(
      `replay: ${options.turns} turns (${options.turns * 4} calls), ${options.clients} callers, ${options.blocks} blocks of ${options.seconds} s per mode, cache ${options.cache ? 'on' : 'off'}`,
    );
    const totals = Object.fromEntries(
      services.map((s) => [s.mode, { latencies: [] as number[], requests: 0, cpu: 0, seconds: 0, errors: 0 }]),
    );
    // Warm both up, then alternate blocks so that load on the machine falls on both alike.
    for (const service of services) await closedLoopLoad(options.clients, 2, (i) => call(service.clients[i % service.clients.length]));
    for (let block = 0; block < options.blocks; block += 1)
      for (const service of block % 2 === 0 ? services : [...services].reverse()) {
        const cpuBefore = cpuSeconds(service.child.child.pid!);
        const result = await closedLoopLoad(options.clients, options.seconds, (i) => call(service.clients[i % service.clients.length]));
        const total = totals[service.mode];
        total.cpu += cpuSeconds(service.child.child.pid!) - cpuBefore;
        total.latencies.push(...result.latencies);
        total.requests += result.latencies.length;
        total.seconds += result.elapsedSeconds;
        total.errors += result.errors;
      }
    const figures = Object.fromEntries(
      Object.entries(totals).map(([mode, t]) => {
        t.latencies.sort((a, b) => a - b);
        return [
          mode,
          {
            requests: t.requests,
            errors: t.errors,
            requestsPerSecond: Math.round(t.requests / t.seconds),
            p50Ms: round2(percentile(t.latencies, 50)),
            p99Ms: round2(percentile(t.latencies, 99)),
            grpcCpuMsPerRequest: round2((t.cpu * 1000) / Math.max(1, t.requests)),
          },
        ];
      }),
    );
    for (const [mode, f] of Object.entries(figures))
      console.log(
        `  encryption ${mode}: ${f.requestsPerSecond} requests/s, p50 ${f.p50Ms} ms, p99 ${f.p99Ms} ms, ${f.grpcCpuMsPerRequest} ms CPU a request (${f.errors} errors)`,
      );
    console.log(`  load ${load().join(' ')}`);
    return { turns: options.turns, clients: options.clients, cache: options.cache, ...figures, load: load() };
  } finally {
    for (const service of services) {
      for (const client of service.clients) client.close();
      await stopChild(service.child.child);
      if (!options.keep) {
        await admin.deleteTopics({ topics: [service.topic, `${service.topic}.dlq`] }).catch(() => undefined);
        await dropSchema(databaseUrl, service.schema).catch(() => undefined);
        await dropSchema(benchKeyStoreUrl(databaseUrl), service.schema).catch(() => undefined);
      }
    }
  }
}

const CONVERSATIONS = 10_000;

async function sweepPart(databaseUrl: string, payloads: number, keep: boolean) {
  const schema = `bench_enc_sweep_${Date.now().toString(36)}`;
  const keysUrl = benchKeyStoreUrl(databaseUrl);
  await runMigrations(databaseUrl, schema);
  await ensureDatabase(keysUrl);
  await migrateKeyStore(keysUrl, schema);
  const pool = createPool({ url: databaseUrl, schema, poolSize: 4, applicationName: 'toolhistory-bench', statementTimeoutMs: 0 });
  const keyPool = createPool({ url: keysUrl, schema, poolSize: 1, applicationName: 'toolhistory-bench', statementTimeoutMs: 0 });
  const keys = await PostgresDataKeyStore.open({ url: keysUrl, schema, poolSize: 2 }, { migrate: false });
  const invocations = Math.ceil(payloads / 2);
  try {
    console.log(`sweep: seeding ${invocations} invocations (${invocations * 2} expired payloads) in ${CONVERSATIONS} conversations`);
    const seeded = Date.now();
    // A data key per conversation, its retention ended a minute ago; the rows' seals name it.
    await keyPool.query(
      `INSERT INTO data_keys (key_id, tenant_id, conversation_id, expires_at, kek_id, wrapped)
       SELECT md5('k' || (c % $1))::uuid, 'bench', 'conv-' || (c % $1), now() - interval '1 minute', 'k1', md5(random()::text) || md5(random()::text)
       FROM generate_series(1, $1) AS c`,
      [CONVERSATIONS],
    );
    await pool.query(
      `INSERT INTO streams (tenant_id, conversation_id, version) SELECT 'bench', 'conv-' || c, 1 FROM generate_series(1, $1) AS c`,
      [CONVERSATIONS],
    );
    await pool.query(
      `INSERT INTO invocations (tenant_id, conversation_id, run_id, pair_key, round_index, sequence_index, tool_call_id, tool_name,
         requested_at, completed_at, call_event_id, result_event_id, is_error, persist, payload_seals, payloads_expire_at)
       SELECT 'bench', 'conv-' || (i % $2), 'run-' || (i / $2), 'id:call_' || i, 0, 0, 'call_' || i, 'get_order',
         now() - interval '2 days', now() - interval '2 days', md5('c' || i)::uuid, md5('r' || i)::uuid, false, 'full',
         jsonb_build_object('arguments', jsonb_build_object('key', md5('k' || (i % $2))::uuid, 'expiresAt', to_json(now() - interval '1 minute')),
                            'result', jsonb_build_object('key', md5('k' || (i % $2))::uuid, 'expiresAt', to_json(now() - interval '1 minute'))),
         now() - interval '1 minute'
       FROM generate_series(1, $1) AS i`,
      [invocations, CONVERSATIONS],
    );
    for (const [table, column, value] of [
      ['invocation_search', 'document', `to_tsvector('simple', 'get_order kettle orbit ' || i)`],
      [
        'invocation_substring',
        'substring_text',
        `'get_order' || chr(1) || '{"orderId":"A-' || i || '"}' || chr(1) || '{"status":"shipped"}'`,
      ],
    ])
      await pool.query(
        `INSERT INTO ${table} (tenant_id, conversation_id, run_id, pair_key, at, ${column})
         SELECT 'bench', 'conv-' || (i % $2), 'run-' || (i / $2), 'id:call_' || i, now() - interval '2 days', ${value}
         FROM generate_series(1, $1) AS i`,
        [invocations, CONVERSATIONS],
      );
    await pool.query('ANALYZE');
    console.log(`  seeded in ${((Date.now() - seeded) / 1000).toFixed(1)} s; load ${load().join(' ')}`);

    const vault = new EnvelopeVault(keys, new FileKeyring({ active: 'k1', keys: new Map([['k1', { reveal: () => randomBytes(32) }]]) }));
    const machineBefore = machineCpuSeconds();
    const cpuBefore = process.cpuUsage();
    const started = Date.now();
    const swept = await new PostgresPayloadExpiry(pool, vault).sweep(new Date());
    const readModelSeconds = (Date.now() - started) / 1000;
    const keysStarted = Date.now();
    let keysDestroyed = 0;
    for (;;) {
      const destroyed = await keys.destroyExpired(new Date().toISOString(), 1_000);
      keysDestroyed += destroyed.length;
      if (destroyed.length < 1_000) break;
    }
    const keySeconds = (Date.now() - keysStarted) / 1000;
    const nodeCpu = process.cpuUsage(cpuBefore);
    const machine = machineCpuSeconds();
    const left = await pool.query<{ rows: number; documents: number }>(
      `SELECT (SELECT count(*)::int FROM invocations WHERE payloads_expire_at IS NOT NULL) AS rows,
              (SELECT count(*)::int FROM invocation_search) + (SELECT count(*)::int FROM invocation_substring) AS documents`,
    );
    const figures = {
      payloads: swept.payloads,
      invocations: swept.invocations,
      conversations: swept.conversations,
      readModelSeconds: round2(readModelSeconds),
      payloadsPerSecond: Math.round(swept.payloads / readModelSeconds),
      keysDestroyed,
      keySeconds: round2(keySeconds),
      sweeperCpuSeconds: round2((nodeCpu.user + nodeCpu.system) / 1e6),
      machineBusyCpuSeconds: round2(machine.busy - machineBefore.busy),
      left: left.rows[0],
      load: load(),
    };
    console.log(
      `  ${figures.payloads} payloads of ${figures.invocations} invocations in ${figures.readModelSeconds} s (${figures.payloadsPerSecond}/s), ` +
        `${figures.keysDestroyed} keys destroyed in ${figures.keySeconds} s; sweeper CPU ${figures.sweeperCpuSeconds} s, machine busy ${figures.machineBusyCpuSeconds} CPU s; ` +
        `left: ${figures.left.rows} rows due, ${figures.left.documents} documents; load ${figures.load.join(' ')}`,
    );
    return figures;
  } finally {
    await keys.close();
    await keyPool.end();
    await pool.end();
    if (!keep) {
      await dropSchema(databaseUrl, schema).catch(() => undefined);
      await dropSchema(keysUrl, schema).catch(() => undefined);
    }
  }
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      part: { type: 'string' },
      events: { type: 'string' },
      rounds: { type: 'string' },
      turns: { type: 'string' },
      clients: { type: 'string' },
      seconds: { type: 'string' },
      blocks: { type: 'string' },
      cache: { type: 'string' },
      payloads: { type: 'string' },
      keep: { type: 'boolean' },
    },
  });
  const part = values.part ?? 'all';
  if (!['all', 'ingest', 'replay', 'sweep'].includes(part)) throw new Error(`--part must be all, ingest, replay or sweep, not ${part}`);
  const keep = values.keep === true;
  const databaseUrl = await benchDatabaseUrl();
  await ensureDatabase(databaseUrl);
  console.log(`load average at start: ${load().join(' ')}`);
  const kafka = benchKafka(BROKERS);
  const admin = kafka.admin();
  await admin.connect();
  const results: Record<string, unknown> = {};
  try {
    if (part === 'all' || part === 'ingest')
      results.ingest = await ingestPart(
        kafka,
        admin,
        databaseUrl,
        intOption(values, 'events', 30_000),
        intOption(values, 'rounds', 2),
        keep,
      );
    if (part === 'all' || part === 'replay')
      results.replay = await replayPart(kafka, admin, databaseUrl, {
        turns: intOption(values, 'turns', 40),
        clients: intOption(values, 'clients', 16),
        seconds: intOption(values, 'seconds', 5),
        blocks: intOption(values, 'blocks', 4),
        cache: values.cache === 'on',
        keep,
      });
    if (part === 'all' || part === 'sweep') results.sweep = await sweepPart(databaseUrl, intOption(values, 'payloads', 1_000_000), keep);
  } finally {
    await admin.disconnect();
  }
  console.log(JSON.stringify({ mode: 'encryption', ...results }));
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
