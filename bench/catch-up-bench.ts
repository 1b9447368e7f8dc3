/**
 * Catch-up ingest against the machine's floor, in one run: a fresh topic is
 * pre-loaded with the bench traffic, then recorded from its beginning,
 * `--rounds` times, by each recorder in turn (the order rotates every round):
 *
 * 1. a bare exactly-once recorder (the floor, floor-recorder.ts in a process
 *    of its own): kafkajs eachBatch, each message parsed and inserted into
 *    one jsonb table keyed by event id, the partition's offset written in the
 *    same transaction;
 * 2. the service (recorder role), with a fresh consumer group and schema;
 * 3. with `--baseline DIR`, the service of another build (a checkout whose
 *    `npm run build` was run), the same way: a before/after pair in one run.
 *
 * Each rate is the events of the topic over the time from the group's join
 * to the last offset committed in PostgreSQL. Beside it, the work: CPU
 * seconds per 1,000 events of the recorder's process and of the PostgreSQL
 * backends serving its connections (found by its sockets, from /proc),
 * over the same window; for a service also up to when both search
 * projections have caught up with the last call or result (the whole work
 * of making the events recorded and searchable). Where the machine counts
 * hardware instructions, `perf stat` counts them too. Figures are printed
 * per run, then the medians per recorder and their ratios to the floor of
 * the same round. The last line printed is one JSON object.
 *
 *   npm run bench:ingest -- --catch-up [--events 200000] [--rounds 1] [--baseline DIR] [--keep]
 */
import { spawn } from 'node:child_process';
import { loadavg } from 'node:os';
import { resolve } from 'node:path';
import { type Admin, type Kafka, Partitioners } from 'kafkajs';
import type { Pool } from 'pg';
import { createPool, dropSchema, runMigrations, SEARCH_PROJECTIONS } from '../libs/persistence/src';
import { agentTraffic } from '../test/support/traffic';
import {
  benchKeyStoreUrl,
  createBenchTopics,
  CpuMeter,
  InstructionCounter,
  median,
  sleep,
  spawnBenchRecorder,
  stopChild,
} from './bench-support';

const PARTITIONS = 6;
/** The service's default (RECORDER_PARTITIONS_CONCURRENCY): the floor gets the same. */
const CONCURRENT_PARTITIONS = 3;

export interface CatchUpSettings {
  kafka: Kafka;
  admin: Admin;
  brokers: string[];
  databaseUrl: string;
  events: number;
  keep: boolean;
  /** More settings for the service (encryption at rest on or off). */
  serviceEnv?: Record<string, string>;
  /** How many times each recorder records the topic. */
  rounds?: number;
  /** Another build's checkout (built), recorded as `baseline` beside this build's `service`. */
  baseline?: string;
}

type Recorder = 'floor' | 'service' | 'baseline';

interface Work {
  /** CPU seconds per 1,000 events: the recorder's process, its PostgreSQL backends, both. */
  process: number;
  database: number;
  total: number;
}

interface RecorderRun {
  recorder: Recorder;
  round: number;
  eventsPerSecond: number;
  seconds: number;
  /** Up to the last offset committed. */
  cpuMsPer1000Events: Work;
  /** Up to both search projections caught up (a service; the floor has no search). */
  withSearch: (Work & { caughtUpSeconds: number }) | null;
  /** Hardware instructions per event of the process and its backends open at the start, where perf counts them. */
  instructionsPerEvent: number | null;
  backends: number;
  load: number[];
}

const round2 = (x: number) => Math.round(x * 100) / 100;
const perThousand = (cpu: { process: number; database: number }, events: number): Work => ({
  process: round2((cpu.process * 1_000_000) / events),
  database: round2((cpu.database * 1_000_000) / events),
  total: round2(((cpu.process + cpu.database) * 1_000_000) / events),
});

export async function catchUpBench(settings: CatchUpSettings): Promise<void> {
  const stamp = Date.now().toString(36);
  const topic = `bench-catch-up-${stamp}`;
  await createBenchTopics(settings.admin, topic, PARTITIONS);
  const schemas: string[] = [];
  const rounds = settings.rounds ?? 1;
  const recorders: Recorder[] = settings.baseline ? ['floor', 'baseline', 'service'] : ['floor', 'service'];
  const runs: RecorderRun[] = [];
  try {
    console.log(`pre-loading ${settings.events} events (1% duplicates) into ${topic}`);
    await preload(settings.kafka, topic, settings.events);
    const why = await InstructionCounter.unsupported();
    if (why) console.log(`instruction counts: none (${why})`);
    for (let round = 0; round < rounds; round += 1) {
      const order = recorders.map((_, i) => recorders[(i + round) % recorders.length]);
      for (const recorder of order) {
        const schema = `bench_${recorder}_${stamp}_${round}`;
        schemas.push(schema);
        const run =
          recorder === 'floor' ? await bareRecorder(settings, topic, schema) : await serviceRecorder(settings, topic, schema, recorder);
        runs.push({ ...run, recorder, round });
        console.log(describeRun(runs[runs.length - 1]));
      }
    }
    const summary = summarize(runs, recorders);
    for (const line of summary.lines) console.log(line);
    console.log(
      JSON.stringify({
        mode: 'catch-up',
        events: settings.events,
        rounds,
        baseline: settings.baseline ?? null,
        runs,
        medians: summary.medians,
      }),
    );
  } finally {
    if (!settings.keep) {
      await settings.admin.deleteTopics({ topics: [topic, `${topic}.dlq`] }).catch(() => undefined);
      for (const schema of schemas) {
        await dropSchema(settings.databaseUrl, schema).catch(() => undefined);
        await dropSchema(benchKeyStoreUrl(settings.databaseUrl), schema).catch(() => undefined);
      }
    }
  }
}

function describeRun(run: RecorderRun): string {
  const w = run.cpuMsPer1000Events;
  const search = run.withSearch
    ? `; with search caught up (${run.withSearch.caughtUpSeconds} s after): process ${run.withSearch.process} + database ${run.withSearch.database} = ${run.withSearch.total} ms`
    : '';
  const instructions = run.instructionsPerEvent === null ? '' : `, ${run.instructionsPerEvent} instructions an event`;
  return (
    `round ${run.round + 1}, ${run.recorder}: ${run.eventsPerSecond} events/s (${run.seconds} s); CPU per 1,000 events: ` +
    `process ${w.process} + database ${w.database} = ${w.total} ms${search}${instructions}; ${run.backends} backends; load ${run.load.join(' ')}`
  );
}

/** Medians per recorder, and each service's ratios to the floor of its own round (medians of the per-round ratios). */
function summarize(runs: readonly RecorderRun[], recorders: readonly Recorder[]) {
  const lines: string[] = [];
  const medians: Record<string, unknown> = {};
  const floorOf = (round: number) => runs.find((r) => r.recorder === 'floor' && r.round === round)!;
  for (const recorder of recorders) {
    const of = runs.filter((r) => r.recorder === recorder);
    const m = {
      eventsPerSecond: Math.round(median(of.map((r) => r.eventsPerSecond))),
      cpuMsPer1000Events: {
        process: round2(median(of.map((r) => r.cpuMsPer1000Events.process))),
        database: round2(median(of.map((r) => r.cpuMsPer1000Events.database))),
        total: round2(median(of.map((r) => r.cpuMsPer1000Events.total))),
      },
      withSearchMsPer1000Events:
        recorder === 'floor'
          ? null
          : {
              process: round2(median(of.map((r) => r.withSearch!.process))),
              database: round2(median(of.map((r) => r.withSearch!.database))),
              total: round2(median(of.map((r) => r.withSearch!.total))),
              caughtUpSeconds: round2(median(of.map((r) => r.withSearch!.caughtUpSeconds))),
            },
      rateOfFloor: round2(median(of.map((r) => r.eventsPerSecond / floorOf(r.round).eventsPerSecond))),
      cpuOfFloor: round2(median(of.map((r) => r.cpuMsPer1000Events.total / floorOf(r.round).cpuMsPer1000Events.total))),
      cpuWithSearchOfFloor:
        recorder === 'floor' ? null : round2(median(of.map((r) => r.withSearch!.total / floorOf(r.round).cpuMsPer1000Events.total))),
    };
    medians[recorder] = m;
    const c = m.cpuMsPer1000Events;
    lines.push(
      `median of ${of.length}, ${recorder}: ${m.eventsPerSecond} events/s (${m.rateOfFloor} of the floor); CPU per 1,000 events ` +
        `process ${c.process} + database ${c.database} = ${c.total} ms (${m.cpuOfFloor} x the floor)` +
        (m.withSearchMsPer1000Events
          ? `; with search: ${m.withSearchMsPer1000Events.process} + ${m.withSearchMsPer1000Events.database} = ${m.withSearchMsPer1000Events.total} ms (${m.cpuWithSearchOfFloor} x the floor)`
          : ''),
    );
  }
  return { lines, medians };
}

async function preload(kafka: Kafka, topic: string, events: number): Promise<void> {
  const producer = kafka.producer({ createPartitioner: Partitioners.DefaultPartitioner, allowAutoTopicCreation: false });
  await producer.connect();
  try {
    const traffic = agentTraffic(events, { seed: 1, duplicateRate: 0.01, conversations: 5_000 });
    let batch: { key: string; value: string }[] = [];
    const inFlight: Promise<unknown>[] = [];
    for (const event of traffic) {
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
}

async function committedTotal(pool: Pool, table: string): Promise<number> {
  const { rows } = await pool.query<{ n: string | null }>(`SELECT sum(next_offset) AS n FROM ${table} WHERE next_offset > 0`);
  return Number(rows[0].n ?? 0);
}

type Measured = Omit<RecorderRun, 'recorder' | 'round'>;

/** The floor: what recording exactly once costs with nothing else done (floor-recorder.ts, a process of its own). */
async function bareRecorder(settings: CatchUpSettings, topic: string, schema: string): Promise<Measured> {
  const watch = createPool({ url: settings.databaseUrl, schema, poolSize: 1, applicationName: 'toolhistory-bench' });
  const floor = spawn(process.execPath, [resolve(__dirname, 'floor-recorder.js')], {
    env: {
      PATH: process.env.PATH ?? '',
      FLOOR_BROKERS: settings.brokers.join(','),
      FLOOR_TOPIC: topic,
      FLOOR_GROUP: `bench-floor-${schema}`,
      FLOOR_DATABASE_URL: settings.databaseUrl,
      FLOOR_SCHEMA: schema,
      FLOOR_CONCURRENCY: String(CONCURRENT_PARTITIONS),
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let output = '';
  let joinedAt = 0;
  floor.stdout.on('data', (chunk) => {
    output += chunk;
    if (!joinedAt && output.includes('partitions assigned')) joinedAt = Date.now();
  });
  const meter = new CpuMeter(watch, floor.pid!, { databaseUrl: settings.databaseUrl });
  const instructions = new InstructionCounter();
  try {
    for (let waited = 0; !joinedAt; waited += 20) {
      if (waited > 60_000 || floor.exitCode !== null) throw new Error(`the floor recorder did not join its group:\n${output}`);
      await sleep(20);
    }
    await meter.start();
    await instructions.start([floor.pid!]);
    while ((await committedTotal(watch, 'floor_offsets')) < settings.events) await sleep(20);
    const seconds = (Date.now() - joinedAt) / 1000;
    const cpu = await meter.stop();
    const counted = await instructions.stop();
    return {
      eventsPerSecond: Math.round(settings.events / seconds),
      seconds: round2(seconds),
      cpuMsPer1000Events: perThousand(cpu, settings.events),
      withSearch: null,
      instructionsPerEvent: counted === null ? null : Math.round(counted / settings.events),
      backends: cpu.backends,
      load: loadavg().map(round2),
    };
  } finally {
    await meter.stop();
    await stopChild(floor);
    await watch.end();
  }
}

/** Both search projections have passed the last call or result recorded. */
async function searchCaughtUp(pool: Pool): Promise<boolean> {
  const { rows } = await pool.query<{ behind: boolean }>(
    `SELECT coalesce((SELECT max(global_position) FROM events WHERE type IN ('ToolCallRequested', 'ToolResultReceived')), 0)
            > coalesce((SELECT min(position) FROM projection_checkpoints WHERE projection = ANY($1::text[])
                        HAVING count(*) = cardinality($1::text[])), 0) AS behind`,
    [Object.values(SEARCH_PROJECTIONS)],
  );
  return !rows[0].behind;
}

async function serviceRecorder(settings: CatchUpSettings, topic: string, schema: string, recorder: Recorder): Promise<Measured> {
  const build = recorder === 'baseline' ? resolve(settings.baseline!) : null;
  // Each build's own migrations: the baseline may lack this build's newest.
  const migrate: typeof runMigrations = build
    ? ((await import(resolve(build, 'dist/libs/persistence/src'))) as { runMigrations: typeof runMigrations }).runMigrations
    : runMigrations;
  await migrate(settings.databaseUrl, schema);
  const pool = createPool({ url: settings.databaseUrl, schema, poolSize: 1, applicationName: 'toolhistory-bench' });
  const service = spawnBenchRecorder({
    brokers: settings.brokers,
    topic,
    groupId: `bench-service-${schema}`,
    databaseUrl: settings.databaseUrl,
    schema,
    env: settings.serviceEnv,
    ...(build ? { main: resolve(build, 'dist/apps/toolhistory/src/main.js') } : {}),
  });
  const meter = new CpuMeter(pool, service.child.pid!, { databaseUrl: settings.databaseUrl });
  const instructions = new InstructionCounter();
  try {
    const joinedAt = await service.seen('partitions assigned');
    await meter.start();
    await instructions.start([service.child.pid!]);
    while ((await committedTotal(pool, 'consumer_offsets')) < settings.events) await sleep(20);
    const finished = Date.now();
    const seconds = (finished - joinedAt) / 1000;
    const recording = await meter.read();
    const counted = await instructions.stop();
    while (!(await searchCaughtUp(pool))) await sleep(50);
    const caughtUpSeconds = round2((Date.now() - finished) / 1000);
    const all = await meter.stop();
    return {
      eventsPerSecond: Math.round(settings.events / seconds),
      seconds: round2(seconds),
      cpuMsPer1000Events: perThousand(recording, settings.events),
      withSearch: { ...perThousand(all, settings.events), caughtUpSeconds },
      instructionsPerEvent: counted === null ? null : Math.round(counted / settings.events),
      backends: all.backends,
      load: loadavg().map(round2),
    };
  } finally {
    await meter.stop();
    await stopChild(service.child);
    await pool.end();
  }
}
