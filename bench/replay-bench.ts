/**
 * Replay benchmark: the turn-start query under load.
 *
 *   npm run bench:replay -- [--seconds 30] [--clients 64 | --rate 1000] [--view all|messages|structured]
 *                           [--turns 20] [--stale-turns 10] [--ingest-rate 2000] [--other-invocations 1000000]
 *                           [--split-roles] [--encryption on|off] [--keep]
 *
 * Seeds the read model with --other-invocations invocations of other
 * conversations (bulk SQL, as a long-running installation would have), records
 * one conversation of --turns completed runs x 2 rounds x 2 calls (results
 * ~1 KB; --stale-turns of them an hour old, by default half) through Kafka,
 * then runs gRPC callers on loopback for --seconds while other
 * conversations are ingested at --ingest-rate events/s. --split-roles runs the recorder in a second
 * process (SERVICE_ROLES), so only the gRPC process is measured under load.
 * The load is a closed loop of --clients callers (each calls again when
 * answered), or with --rate an open loop: requests sent at a fixed rate
 * whatever the answers, latency measured from when each was due, so a
 * stall is not hidden. Both run --warm-up seconds (default 5) unmeasured
 * first, with ingest on. --view asks for one representation of each turn
 * (REPLAY_VIEW_MESSAGES, REPLAY_VIEW_STRUCTURED). Reports the CPU per
 * request of the gRPC process and of the PostgreSQL backends serving its
 * connections (found by its sockets). BENCH_SERVICE_BUILD=DIR measures the
 * service of another built checkout. The last line printed is one JSON object.
 */
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import { spawn } from 'node:child_process';
import { resolve } from 'node:path';
import { Partitioners } from 'kafkajs';
import { createPool, ensureDatabase } from '../libs/persistence/src';
import type { ToolEvent } from '../libs/contract/src';
import { BENCH_CONVERSATION as CONVERSATION, BENCH_TENANT as TENANT, benchConversation, SEED_SQL } from './replay-fixture';
import { DEFAULT_CHANNEL_OPTIONS } from '../libs/client/src/tool-history-client';
import { freePort } from '../test/support/grpc-client';
import { agentTraffic } from '../test/support/traffic';
import {
  benchKafka,
  benchDatabaseUrl,
  benchServiceEnv,
  benchNodeArgs,
  benchServiceBuild,
  closedLoopLoad,
  openLoopLoad,
  cpuSeconds,
  CpuMeter,
  createBenchTopics,
  intOption,
  parseArgs,
  peakRssMiB,
  percentile,
  sleep,
  teardownBench,
} from './bench-support';

const BROKERS = (process.env.BENCH_KAFKA_BROKERS ?? '127.0.0.1:9092').split(',');
const PROTO = resolve(__dirname, '../../proto/toolhistory/v1/toolhistory.proto');
const WIRE_VIEWS = { all: 'REPLAY_VIEW_UNSPECIFIED', messages: 'REPLAY_VIEW_MESSAGES', structured: 'REPLAY_VIEW_STRUCTURED' } as const;

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      seconds: { type: 'string' },
      clients: { type: 'string' },
      rate: { type: 'string' },
      'warm-up': { type: 'string' },
      turns: { type: 'string' },
      'stale-turns': { type: 'string' },
      view: { type: 'string' },
      'ingest-rate': { type: 'string' },
      'other-invocations': { type: 'string' },
      keep: { type: 'boolean' },
      'split-roles': { type: 'boolean' },
      encryption: { type: 'string' },
    },
  });
  const encryption = values.encryption ?? 'on';
  if (encryption !== 'on' && encryption !== 'off') throw new Error(`--encryption must be on or off, not ${encryption}`);
  const DATABASE_URL = await benchDatabaseUrl();
  const seconds = intOption(values, 'seconds', 30);
  const clients = intOption(values, 'clients', 64);
  const rate = values.rate === undefined ? undefined : intOption(values, 'rate', 1_000);
  const view = values.view ?? 'all';
  const warmUpSeconds = values['warm-up'] === undefined ? 5 : intOption(values, 'warm-up', 5);
  const turns = intOption(values, 'turns', 20);
  const staleTurns = values['stale-turns'] === undefined ? Math.floor(turns / 2) : Number(values['stale-turns']);
  if (!Number.isInteger(staleTurns) || staleTurns < 0 || staleTurns > turns)
    throw new Error(`--stale-turns must be a whole number from 0 to --turns (${turns}), got ${values['stale-turns']}`);
  if (!Object.hasOwn(WIRE_VIEWS, view)) throw new Error(`--view must be one of ${Object.keys(WIRE_VIEWS).join(', ')}, not ${view}`);
  const ingestRate = intOption(values, 'ingest-rate', 2_000, { zero: true });
  const others = intOption(values, 'other-invocations', 1_000_000);

  const stamp = Date.now().toString(36);
  const schema = `bench_replay_${stamp}`;
  const topic = `bench-replay-${stamp}`;
  await ensureDatabase(DATABASE_URL);
  const build = await benchServiceBuild();
  await build.runMigrations(DATABASE_URL, schema);
  const pool = createPool({ url: DATABASE_URL, schema, poolSize: 1, applicationName: 'toolhistory-bench' });

  console.log(`seeding ${others} other invocations`);
  const seedStarted = Date.now();
  for (const statement of SEED_SQL.split(';')
    .map((s) => s.trim())
    .filter(Boolean))
    await pool.query(statement, [others]);
  await pool.query('ANALYZE');
  console.log(`  seeded in ${((Date.now() - seedStarted) / 1000).toFixed(1)} s`);

  const kafka = benchKafka(BROKERS);
  const admin = kafka.admin();
  await admin.connect();
  await createBenchTopics(admin, topic, 6);
  const port = await freePort();
  const nodeArgs = benchNodeArgs();
  const splitRoles = values['split-roles'] === true;
  const start = (roles: string) =>
    spawn(process.execPath, [...nodeArgs, build.main], {
      env: benchServiceEnv({ brokers: BROKERS, stamp, topic, databaseUrl: DATABASE_URL, schema, roles, grpcPort: port, encryption }),
      stdio: ['ignore', 'pipe', 'inherit'],
    });
  // --split-roles: the recorder in its own process, as SERVICE_ROLES allows in production.
  const service = start(splitRoles ? 'grpc' : 'recorder,grpc');
  const recorder = splitRoles ? start('recorder') : undefined;
  recorder?.stdout?.resume();
  let output = '';
  service.stdout.on('data', (c) => (output = (output + c).slice(-20_000)));
  const producer = kafka.producer({ createPartitioner: Partitioners.DefaultPartitioner });
  await producer.connect();

  const definition = protoLoader.loadSync(PROTO, { keepCase: true, longs: String, enums: String, defaults: true, oneofs: true });
  const loaded = grpc.loadPackageDefinition(definition) as unknown as {
    toolhistory: { v1: { ToolHistory: grpc.ServiceClientConstructor } };
  };
  const channels = Array.from(
    { length: 8 },
    () => new loaded.toolhistory.v1.ToolHistory(`127.0.0.1:${port}`, grpc.credentials.createInsecure()),
  );
  // Under load the callers keep responses as bytes: decoding 100 KB messages in this one
  // process would make the load generator, not the service, the bottleneck.
  const method = (definition['toolhistory.v1.ToolHistory'] as grpc.ServiceDefinition)['GetReplayHistory'];
  const RawClient = grpc.makeGenericClientConstructor(
    { GetReplayHistory: { ...method, responseDeserialize: (bytes: Buffer) => bytes } },
    'ToolHistory',
  );
  // The client package's channel options (its flow-control window): what a caller gets by default.
  const rawChannels = Array.from(
    { length: 8 },
    () => new RawClient(`127.0.0.1:${port}`, grpc.credentials.createInsecure(), { ...DEFAULT_CHANNEL_OPTIONS }),
  );
  let responseBytes = 0;
  const rawCall = (client: grpc.Client) =>
    new Promise<void>((done, fail) =>
      (client as unknown as { GetReplayHistory: (...args: unknown[]) => void }).GetReplayHistory(
        { tenant_id: TENANT, conversation_id: CONVERSATION, view: WIRE_VIEWS[view as keyof typeof WIRE_VIEWS] },
        { deadline: new Date(Date.now() + 5_000) },
        (error: Error | null, bytes: Buffer) => {
          if (error) return fail(error);
          responseBytes = bytes.length;
          done();
        },
      ),
    );
  const call = (client: grpc.Client) =>
    new Promise<{ turns: unknown[] }>((done, fail) =>
      (client as unknown as { GetReplayHistory: (...args: unknown[]) => void }).GetReplayHistory(
        { tenant_id: TENANT, conversation_id: CONVERSATION },
        { deadline: new Date(Date.now() + 5_000) },
        (error: Error | null, response: { turns: unknown[] }) => (error ? fail(error) : done(response)),
      ),
    );

  try {
    for (let waited = 0; !output.includes('toolhistory started'); waited += 100) {
      if (waited > 60_000 || service.exitCode !== null || service.signalCode !== null) throw new Error(`service did not start:\n${output}`);
      await sleep(100);
    }
    const conversation = benchConversation(turns, staleTurns);
    await producer.send({ topic, acks: -1, messages: conversation.map((e) => ({ key: e.conversationId, value: JSON.stringify(e) })) });
    for (let waited = 0; ; waited += 200) {
      const response = await call(channels[0]).catch(() => ({ turns: [] }));
      if (response.turns.length === turns - staleTurns) break;
      if (waited > 60_000) throw new Error(`the bench conversation did not become replayable (turns: ${response.turns.length})`);
      await sleep(200);
    }
    const sample = await call(channels[0]);
    console.log(
      `conversation recorded: ${sample.turns.length} turns replayed (${staleTurns} runs are stale), response ${JSON.stringify(sample).length} bytes as JSON`,
    );

    // Background ingest of other conversations at the offered rate.
    let ingesting = true;
    let ingested = 0;
    const traffic = agentTraffic(ingestRate * (seconds + 30 + warmUpSeconds), { seed: 5, conversations: 10_000 });
    const ingest = (async () => {
      const start = Date.now();
      while (ingesting) {
        const due = Math.floor(((Date.now() - start) / 1000) * ingestRate);
        const batch: ToolEvent[] = [];
        while (ingested + batch.length < due) {
          const next = traffic.next();
          if (next.done) break;
          batch.push(next.value);
        }
        if (batch.length > 0) {
          ingested += batch.length;
          await producer.send({ topic, messages: batch.map((e) => ({ key: e.conversationId, value: JSON.stringify(e) })) });
        }
        await sleep(20);
      }
    })();

    console.log(
      rate === undefined
        ? `load: ${clients} concurrent callers for ${seconds} s, ingest at ${ingestRate} events/s, view ${view}`
        : `load: ${rate} requests/s offered (open loop) for ${seconds} s, ingest at ${ingestRate} events/s, view ${view}`,
    );
    const oneCall = (i: number) => rawCall(rawChannels[i % rawChannels.length]);
    // The same load, not measured, while ingest settles into its rate: the figures are of the steady state.
    if (warmUpSeconds > 0) {
      if (rate === undefined) await closedLoopLoad(clients, warmUpSeconds, oneCall);
      else await openLoopLoad(rate, warmUpSeconds, oneCall);
    }
    // The gRPC process and the PostgreSQL backends serving its connections (with --split-roles, the recorder's are apart).
    const serviceCpu = new CpuMeter(pool, service.pid!, { databaseUrl: DATABASE_URL });
    await serviceCpu.start();
    const benchCpuBefore = cpuSeconds(process.pid);
    const ingestedBefore = ingested;
    const load = rate === undefined ? await closedLoopLoad(clients, seconds, oneCall) : await openLoopLoad(rate, seconds, oneCall);
    const { latencies, errors, elapsedSeconds: elapsed } = load;
    if ('firstError' in load && load.firstError) console.log(`  first error: ${load.firstError}`);
    const { process: grpcCpu, database: databaseCpu } = await serviceCpu.stop();
    const benchCpu = cpuSeconds(process.pid) - benchCpuBefore;
    ingesting = false;
    await ingest;
    const round = (x: number) => Math.round(x * 100) / 100;
    const figures = {
      mode: rate === undefined ? `closed loop, ${clients} callers` : `open loop, ${rate} requests/s offered`,
      view,
      requests: latencies.length,
      responseBytes,
      errors,
      requestsPerSecond: Math.round(latencies.length / elapsed),
      p50Ms: round(percentile(latencies, 50)),
      p99Ms: round(percentile(latencies, 99)),
      p999Ms: round(percentile(latencies, 99.9)),
      maxMs: round(latencies[latencies.length - 1]),
      ingestedEvents: ingested - ingestedBefore,
      ingestEventsPerSecond: Math.round((ingested - ingestedBefore) / elapsed),
      splitRoles,
      serviceCpuSeconds: round(grpcCpu),
      serviceCpuMsPerRequest: latencies.length === 0 ? null : round((grpcCpu * 1000) / latencies.length),
      databaseCpuSeconds: round(databaseCpu),
      databaseCpuMsPerRequest: latencies.length === 0 ? null : round((databaseCpu * 1000) / latencies.length),
      benchCpuSeconds: round(benchCpu),
      servicePeakRssMiB: peakRssMiB(service.pid!),
      benchPeakRssMiB: peakRssMiB(process.pid),
    };
    console.log(
      `  ${figures.requests} requests (${figures.errors} errors): ${figures.requestsPerSecond}/s, p50 ${figures.p50Ms} ms, p99 ${figures.p99Ms} ms, ` +
        `p99.9 ${figures.p999Ms} ms; CPU a request: gRPC process ${figures.serviceCpuMsPerRequest} ms, its PostgreSQL backends ${figures.databaseCpuMsPerRequest} ms; response ${responseBytes} bytes`,
    );
    console.log(JSON.stringify(figures));
  } finally {
    for (const c of [...channels, ...rawChannels]) c.close();
    await teardownBench({
      children: [service, recorder],
      producer,
      admin,
      topic,
      pool,
      databaseUrl: DATABASE_URL,
      schema,
      keep: values.keep === true,
    });
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
