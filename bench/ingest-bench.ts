/**
 * Ingest benchmark: publishes realistic agent traffic to the local broker and
 * measures the service end to end (published -> committed in PostgreSQL).
 *
 *   npm run bench:ingest -- [--events 200000] [--rate 5000] [--lag-events 50000] [--redaction on|off] [--encryption on|off] [--keep]
 *   npm run bench:ingest -- --catch-up [--events 200000] [--rounds 1] [--baseline DIR] [--encryption on|off] [--keep]
 *     (catch-up-bench.ts: the service against a bare recorder, CPU per event of each and of its database backends)
 *
 * BENCH_SERVICE_BUILD=DIR measures the service of another built checkout
 * (its migrations too) with this benchmark: a before/after pair.
 *
 * Encryption at rest is on by default, as in the service; `npm run
 * bench:encryption` compares on and off in one run.
 *
 * Redaction runs with the default policy (every detector on every payload);
 * `--redaction off` gives the service a policy with no detectors, for the
 * cost comparison.
 *
 * Phase 1 publishes --events as fast as the producer can and reports
 * sustained throughput. Phase 2 offers --rate events/s and reports per-event
 * lag from the send to the commit of the batch that holds it, observed by
 * polling the committed offsets every 10 ms (so figures are +0..10 ms coarse).
 * Between the two, it waits for both search projections (words and
 * substrings) to catch up with the burst (and reports how long each took),
 * so phase 2 measures a steady state; phase 2 also reports each search's
 * freshness, from the send of a call or result until its projection's
 * checkpoint passes it.
 * The last line printed is one JSON object with the figures.
 */
import { createWriteStream, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Partitioners, Producer } from 'kafkajs';
import type { Pool } from 'pg';
import { createPool, ensureDatabase, SEARCH_PROJECTIONS } from '../libs/persistence/src';
import { agentTraffic } from '../test/support/traffic';
import {
  benchKafka,
  benchDatabaseUrl,
  benchEncryptionEnv,
  benchServiceBuild,
  CpuAccount,
  CpuMeter,
  createBenchTopics,
  intOption,
  parseArgs,
  peakRssMiB,
  percentile,
  sleep,
  spawnBenchRecorder,
  teardownBench,
} from './bench-support';
import { catchUpBench } from './catch-up-bench';

const BROKERS = (process.env.BENCH_KAFKA_BROKERS ?? '127.0.0.1:9092').split(',');
const PARTITIONS = 6;

function partitionOf(key: string): number {
  let h = 0;
  for (let i = 0; i < key.length; i += 1) h = (Math.imul(h, 31) + key.charCodeAt(i)) | 0;
  return Math.abs(h) % PARTITIONS;
}

interface Pending {
  offset: number;
  sentAt: number;
}

/** Sends events with explicit partitions, remembering each message's offset and send time. */
/** Waits until a search projection's checkpoint reaches the last call or result recorded; seconds since `since`. */
async function searchCatchUp(pool: Pool, projection: string, since: number): Promise<number> {
  const { rows } = await pool.query<{ last: string }>(
    `SELECT coalesce(max(global_position), 0)::text AS last FROM events WHERE type IN ('ToolCallRequested', 'ToolResultReceived')`,
  );
  for (;;) {
    const checkpoint = await pool.query<{ position: string }>(`SELECT position::text FROM projection_checkpoints WHERE projection = $1`, [
      projection,
    ]);
    if (BigInt(checkpoint.rows[0]?.position ?? '0') >= BigInt(rows[0].last)) return (Date.now() - since) / 1000;
    await sleep(50);
  }
}

/**
 * Search freshness: from an invocation event's send until a search
 * projection's checkpoint passes its global position (its document is
 * written), watched by polling the checkpoint.
 */
class SearchFreshness {
  private readonly sentAt = new Map<string, number>();
  private readonly lags: number[] = [];
  private position = '0';
  private following = true;

  constructor(
    private readonly pool: Pool,
    private readonly projection: string,
  ) {}

  sent(events: readonly { eventId: string; type: string }[]): void {
    const now = Date.now();
    for (const e of events)
      if ((e.type === 'ToolCallRequested' || e.type === 'ToolResultReceived') && !this.sentAt.has(e.eventId))
        this.sentAt.set(e.eventId, now);
  }

  async follow(): Promise<void> {
    const start = await this.pool.query<{ p: string }>('SELECT coalesce(max(global_position), 0)::text AS p FROM events');
    this.position = start.rows[0].p;
    while (this.following) {
      const { rows } = await this.pool.query<{ position: string }>(
        `SELECT position::text FROM projection_checkpoints WHERE projection = $1`,
        [this.projection],
      );
      const now = Date.now();
      const checkpoint = rows[0]?.position ?? '0';
      if (BigInt(checkpoint) > BigInt(this.position)) {
        const passed = await this.pool.query<{ id: string }>(
          'SELECT event_id::text AS id FROM events WHERE global_position > $1 AND global_position <= $2',
          [this.position, checkpoint],
        );
        for (const { id } of passed.rows) {
          const at = this.sentAt.get(id);
          if (at === undefined) continue;
          this.lags.push(now - at);
          this.sentAt.delete(id);
        }
        this.position = checkpoint;
      }
      await sleep(10);
    }
  }

  /** Waits until every sent call and result is searchable (or the deadline passes); the lags, sorted. */
  async stop(deadline: number): Promise<number[]> {
    while (this.sentAt.size > 0 && Date.now() < deadline) await sleep(20);
    this.following = false;
    return this.lags.sort((a, b) => a - b);
  }
}

class TrackingPublisher {
  readonly pending: Pending[][] = Array.from({ length: PARTITIONS }, () => []);
  sent = 0;

  constructor(
    private readonly producer: Producer,
    private readonly topic: string,
  ) {}

  async send(events: readonly { conversationId: string }[], track: boolean): Promise<void> {
    const byPartition = new Map<number, { key: string; value: string }[]>();
    for (const e of events) {
      const p = partitionOf(e.conversationId);
      const list = byPartition.get(p) ?? [];
      list.push({ key: e.conversationId, value: JSON.stringify(e) });
      byPartition.set(p, list);
    }
    const sentAt = Date.now();
    const results = await this.producer.sendBatch({
      acks: -1,
      topicMessages: [...byPartition].map(([partition, messages]) => ({
        topic: this.topic,
        messages: messages.map((m) => ({ ...m, partition })),
      })),
    });
    this.sent += events.length;
    if (!track) return;
    for (const r of results) {
      const count = byPartition.get(r.partition)!.length;
      const base = Number(r.baseOffset);
      for (let i = 0; i < count; i += 1) this.pending[r.partition].push({ offset: base + i, sentAt });
    }
  }
}

async function committedOffsets(pool: Pool, groupId: string): Promise<Map<number, number>> {
  const { rows } = await pool.query<{ partition: number; next_offset: string }>(
    'SELECT partition, next_offset FROM consumer_offsets WHERE group_id = $1',
    [groupId],
  );
  return new Map(rows.map((r) => [r.partition, Number(r.next_offset)]));
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      events: { type: 'string' },
      rate: { type: 'string' },
      'lag-events': { type: 'string' },
      redaction: { type: 'string' },
      encryption: { type: 'string' },
      keep: { type: 'boolean' },
      'catch-up': { type: 'boolean' },
      rounds: { type: 'string' },
      baseline: { type: 'string' },
    },
  });
  const DATABASE_URL = await benchDatabaseUrl();
  const encryption = values.encryption ?? 'on';
  if (encryption !== 'on' && encryption !== 'off') throw new Error(`--encryption must be on or off, not ${encryption}`);
  if (values['catch-up']) {
    await ensureDatabase(DATABASE_URL);
    const kafka = benchKafka(BROKERS);
    const admin = kafka.admin();
    await admin.connect();
    try {
      await catchUpBench({
        kafka,
        admin,
        brokers: BROKERS,
        databaseUrl: DATABASE_URL,
        events: intOption(values, 'events', 200_000),
        keep: values.keep === true,
        serviceEnv: benchEncryptionEnv(DATABASE_URL, encryption),
        rounds: intOption(values, 'rounds', 1),
        baseline: values.baseline,
      });
    } finally {
      await admin.disconnect();
    }
    return;
  }
  const totalEvents = intOption(values, 'events', 200_000);
  const rate = intOption(values, 'rate', 5_000);
  const lagEvents = intOption(values, 'lag-events', 50_000);
  const redaction = values.redaction ?? 'on';
  if (redaction !== 'on' && redaction !== 'off') throw new Error(`--redaction must be on or off, not ${redaction}`);
  let policyEnv: Record<string, string> = {};
  if (redaction === 'off') {
    const policyFile = join(mkdtempSync(join(tmpdir(), 'toolhistory-bench-')), 'policy.json');
    writeFileSync(policyFile, JSON.stringify({ defaults: { detectors: [] } }));
    policyEnv = { POLICY_FILE: policyFile };
  }

  const stamp = Date.now().toString(36);
  const schema = `bench_${stamp}`;
  const topic = `bench-tool-events-${stamp}`;
  const groupId = `bench-${stamp}`;

  await ensureDatabase(DATABASE_URL);
  const build = await benchServiceBuild();
  await build.runMigrations(DATABASE_URL, schema);
  const pool = createPool({ url: DATABASE_URL, schema, poolSize: 2, applicationName: 'toolhistory-bench' });

  const kafka = benchKafka(BROKERS);
  const admin = kafka.admin();
  await admin.connect();
  await createBenchTopics(admin, topic, PARTITIONS);

  const service = spawnBenchRecorder({
    brokers: BROKERS,
    topic,
    groupId,
    databaseUrl: DATABASE_URL,
    schema,
    env: { ...policyEnv, ...benchEncryptionEnv(DATABASE_URL, encryption) },
    main: build.main,
  });
  // BENCH_SERVICE_LOG=file keeps the service's log lines (e.g. with LOG_LEVEL=debug in BENCH_SERVICE_ENV).
  if (process.env.BENCH_SERVICE_LOG) service.child.stdout?.pipe(createWriteStream(process.env.BENCH_SERVICE_LOG));
  const producer = kafka.producer({ createPartitioner: Partitioners.DefaultPartitioner, allowAutoTopicCreation: false });
  await producer.connect();
  const publisher = new TrackingPublisher(producer, topic);

  try {
    await service.seen('partitions assigned');

    // Phase 1: throughput.
    console.log(`phase 1: publishing ${totalEvents} events as fast as possible (1% duplicates)`);
    const traffic = agentTraffic(totalEvents + lagEvents, { seed: 1, duplicateRate: 0.01, conversations: 5_000 });
    const take = (n: number) => {
      const out = [];
      for (let i = 0; i < n; i += 1) {
        const next = traffic.next();
        if (next.done) break;
        out.push(next.value);
      }
      return out;
    };
    const cpu = new CpuAccount(pool, DATABASE_URL, { service: service.child.pid! }, 'benchProducer');
    await cpu.start();
    const started = Date.now();
    const inFlight: Promise<void>[] = [];
    for (let sent = 0; sent < totalEvents; sent += 1_000) {
      inFlight.push(publisher.send(take(Math.min(1_000, totalEvents - sent)), false));
      if (inFlight.length >= 4) await inFlight.shift();
    }
    await Promise.all(inFlight);
    const publishedAt = Date.now();
    const total = async () => [...(await committedOffsets(pool, groupId)).values()].reduce((a, b) => a + b, 0);
    while ((await total()) < totalEvents) await sleep(50);
    const finished = Date.now();
    const cpuSplit = await cpu.stop();
    const { rows } = await pool.query<{ n: string }>('SELECT count(*) AS n FROM events');
    const recorded = Number(rows[0].n);
    const eventsPerSecond = Math.round(totalEvents / ((finished - started) / 1000));
    console.log(
      `  published in ${((publishedAt - started) / 1000).toFixed(1)} s (${Math.round(totalEvents / ((publishedAt - started) / 1000))} ev/s), ` +
        `all committed after ${((finished - started) / 1000).toFixed(1)} s: ${eventsPerSecond} messages/s end to end; ` +
        `${recorded} distinct events recorded (${totalEvents - recorded} duplicates dropped)`,
    );

    console.log(`  CPU seconds during phase 1: ${JSON.stringify(cpuSplit)}`);

    // The burst left the search projections behind: how long each takes to catch up, then phase 2 starts from a steady state.
    const [searchCaughtUpSeconds, substringCaughtUpSeconds] = await Promise.all(
      [SEARCH_PROJECTIONS.words, SEARCH_PROJECTIONS.substring].map((projection) => searchCatchUp(pool, projection, finished)),
    );
    console.log(
      `  search projections caught up after recording finished: words ${searchCaughtUpSeconds.toFixed(1)} s, substrings ${substringCaughtUpSeconds.toFixed(1)} s`,
    );

    // Phase 2: lag at a fixed offered rate.
    console.log(`phase 2: offering ${rate} events/s for ${lagEvents} events`);
    const lags: number[] = [];
    let polling = true;
    const poller = (async () => {
      while (polling) {
        const committed = await committedOffsets(pool, groupId);
        const now = Date.now();
        publisher.pending.forEach((queue, partition) => {
          const next = committed.get(partition) ?? 0;
          while (queue.length > 0 && queue[0].offset < next) lags.push(now - queue.shift()!.sentAt);
        });
        await sleep(10);
      }
    })();
    const phase2Cpu = new CpuMeter(pool, service.child.pid!, { databaseUrl: DATABASE_URL });
    await phase2Cpu.start();
    const freshness = new SearchFreshness(pool, SEARCH_PROJECTIONS.words);
    const substringFreshness = new SearchFreshness(pool, SEARCH_PROJECTIONS.substring);
    const freshnessPollers = [freshness.follow(), substringFreshness.follow()];
    const tickMs = 10;
    const phaseStart = Date.now();
    let offered = 0;
    const sends: Promise<void>[] = [];
    while (offered < lagEvents) {
      const due = Math.min(lagEvents, Math.floor(((Date.now() - phaseStart) / 1000) * rate));
      if (due > offered) {
        const batch = take(due - offered);
        freshness.sent(batch);
        substringFreshness.sent(batch);
        sends.push(publisher.send(batch, true));
        offered = due;
      }
      await sleep(tickMs);
    }
    await Promise.all(sends);
    const offeredSeconds = (Date.now() - phaseStart) / 1000;
    const deadline = Date.now() + 60_000;
    while (publisher.pending.some((q) => q.length > 0) && Date.now() < deadline) await sleep(20);
    polling = false;
    await poller;
    lags.sort((a, b) => a - b);
    const searchLags = await freshness.stop(Date.now() + 60_000);
    const substringLags = await substringFreshness.stop(Date.now() + 60_000);
    await Promise.all(freshnessPollers);
    // Everything offered is recorded and searchable now: the work of phase 2, per 1,000 events.
    const phase2Work = await phase2Cpu.stop();
    const per1000 = (seconds: number) => Math.round(((seconds * 1_000_000) / lagEvents) * 10) / 10;
    // What the search projection left behind, written document by document (a GIN pending list counts in its index).
    const sizes = await pool.query<{ search: number; wordsIndex: number; substring: number; trigramIndex: number }>(
      `SELECT (pg_total_relation_size('invocation_search') / 1048576.0)::numeric(10, 1)::float8 AS search,
              (pg_relation_size('invocation_search_tenant_document_idx') / 1048576.0)::numeric(10, 1)::float8 AS "wordsIndex",
              (pg_total_relation_size('invocation_substring') / 1048576.0)::numeric(10, 1)::float8 AS substring,
              (coalesce(pg_relation_size(to_regclass('invocation_substring_tenant_text_idx')), 0) / 1048576.0)::numeric(10, 1)::float8 AS "trigramIndex"`,
    );

    const figures = {
      events: totalEvents,
      redaction,
      distinctEvents: recorded,
      eventsPerSecond,
      offeredRate: Math.round(lagEvents / offeredSeconds),
      lagEvents: lags.length,
      lagP50Ms: percentile(lags, 50),
      lagP99Ms: percentile(lags, 99),
      lagMaxMs: lags[lags.length - 1],
      searchFreshnessEvents: searchLags.length,
      searchFreshnessP50Ms: percentile(searchLags, 50),
      searchFreshnessP99Ms: percentile(searchLags, 99),
      searchFreshnessMaxMs: searchLags[searchLags.length - 1],
      substringFreshnessEvents: substringLags.length,
      substringFreshnessP50Ms: percentile(substringLags, 50),
      substringFreshnessP99Ms: percentile(substringLags, 99),
      substringFreshnessMaxMs: substringLags[substringLags.length - 1],
      servicePeakRssMiB: peakRssMiB(service.child.pid!),
      phase1CpuSeconds: cpuSplit,
      phase2CpuMsPer1000Events: { service: per1000(phase2Work.process), postgresBackends: per1000(phase2Work.database) },
      searchCaughtUpSeconds: Number(searchCaughtUpSeconds.toFixed(1)),
      substringCaughtUpSeconds: Number(substringCaughtUpSeconds.toFixed(1)),
      searchTableMiB: sizes.rows[0].search,
      wordsIndexMiB: sizes.rows[0].wordsIndex,
      substringTableMiB: sizes.rows[0].substring,
      trigramIndexMiB: sizes.rows[0].trigramIndex,
      benchPeakRssMiB: peakRssMiB(process.pid),
    };
    console.log(
      `  lag over ${lags.length} events at ${figures.offeredRate} ev/s: p50 ${figures.lagP50Ms} ms, p99 ${figures.lagP99Ms} ms, max ${figures.lagMaxMs} ms`,
    );
    console.log(
      `  search freshness, words (send to searchable) over ${searchLags.length} calls and results: p50 ${figures.searchFreshnessP50Ms} ms, p99 ${figures.searchFreshnessP99Ms} ms (target 2,000 ms), max ${figures.searchFreshnessMaxMs} ms`,
    );
    console.log(
      `  search freshness, substrings over ${substringLags.length} calls and results: p50 ${figures.substringFreshnessP50Ms} ms, p99 ${figures.substringFreshnessP99Ms} ms, max ${figures.substringFreshnessMaxMs} ms`,
    );
    console.log(
      `  CPU per 1,000 events in phase 2 (recorded and searchable): service ${figures.phase2CpuMsPer1000Events.service} ms, its PostgreSQL backends ${figures.phase2CpuMsPer1000Events.postgresBackends} ms`,
    );
    console.log(JSON.stringify(figures));
  } finally {
    await teardownBench({
      children: [service.child],
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
