import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { resolve } from 'node:path';
import { mkdirSync, readdirSync, readFileSync, readlinkSync, writeFileSync } from 'node:fs';
import { type Admin, Kafka, logLevel, type Producer } from 'kafkajs';
import type { Pool } from 'pg';
import { openLocalDatabase, readLocalSettings } from '../libs/local-database/src';
import { dropSchema } from '../libs/persistence/src';
import { parseArgs } from 'node:util';

export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return NaN;
  const index = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[index];
}

/** Peak resident set size of a process, from /proc (Linux), in MiB. */
export function peakRssMiB(pid: number): number | null {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const match = /VmHWM:\s+(\d+) kB/.exec(status);
    return match ? Math.round(Number(match[1]) / 1024) : null;
  } catch {
    return null;
  }
}

export function intOption(values: Record<string, unknown>, name: string, fallback: number, { zero = false } = {}): number {
  const raw = values[name];
  if (raw === undefined) return fallback;
  const n = Number(raw);
  const min = zero ? 0 : 1;
  if (!Number.isInteger(n) || n < min)
    throw new Error(`--${name} must be a ${zero ? 'whole number' : 'positive integer'}, got ${String(raw)}`);
  return n;
}

export { parseArgs };

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

const CLOCK_TICKS_PER_SECOND = 100;

/** CPU seconds (user + system) a process has used so far, from /proc (Linux). */
export function cpuSeconds(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS_PER_SECOND;
  } catch {
    return 0;
  }
}

/** Busy and total CPU seconds of the whole machine so far, from /proc/stat. */
export function machineCpuSeconds(): { busy: number; total: number } {
  const line = readFileSync('/proc/stat', 'utf8').split('\n')[0];
  const ticks = line.trim().split(/\s+/).slice(1).map(Number);
  const idle = ticks[3] + (ticks[4] ?? 0);
  const total = ticks.reduce((a, b) => a + b, 0);
  return { busy: (total - idle) / CLOCK_TICKS_PER_SECOND, total: total / CLOCK_TICKS_PER_SECOND };
}

export interface BenchResources {
  children: ReadonlyArray<ChildProcess | undefined>;
  producer: Producer;
  admin: Admin;
  topic: string;
  pool: Pool;
  databaseUrl: string;
  schema: string;
  /** Keep the topic and the schema for inspection. */
  keep: boolean;
}

/**
 * The benchmarks' Kafka client: retried as the tests' is (10 attempts), so a
 * broker started just before, still electing the new topics' leaders, is
 * waited for rather than failing the run.
 */
export function benchKafka(brokers: string[], clientId = 'toolhistory-bench'): Kafka {
  return new Kafka({ clientId, brokers, logLevel: logLevel.NOTHING, retry: { retries: 10 } });
}

export async function createBenchTopics(admin: Admin, topic: string, partitions: number): Promise<void> {
  await admin.createTopics({
    topics: [
      { topic, numPartitions: partitions, replicationFactor: 1 },
      { topic: `${topic}.dlq`, numPartitions: partitions, replicationFactor: 1 },
    ],
    waitForLeaders: true,
  });
}

/** Stops the services the benchmark started, by their own pids, and removes what it created. */
export async function teardownBench(r: BenchResources): Promise<void> {
  for (const child of r.children) {
    if (!child || child.exitCode !== null || child.signalCode !== null) continue;
    child.kill('SIGTERM');
    await new Promise((done) => child.once('exit', done));
  }
  await r.producer.disconnect();
  if (!r.keep) await r.admin.deleteTopics({ topics: [r.topic, `${r.topic}.dlq`] }).catch(() => undefined);
  await r.admin.disconnect();
  await r.pool.end();
  if (!r.keep) await dropSchema(r.databaseUrl, r.schema);
  if (!r.keep) await dropSchema(benchKeyStoreUrl(r.databaseUrl), r.schema).catch(() => undefined);
}

/** The benchmarks' key store: a database of its own beside the bench database (as production has it), a schema per bench schema. */
export const benchKeyStoreUrl = (databaseUrl: string): string => databaseUrl.replace(/\/[^/?]+(\?|$)/, '/toolhistory_bench_keys$1');

/**
 * Encryption at rest for a benchmark's service: on (the default) with a
 * keyring of the benchmarks' own under .cache/bench (made once) and the
 * PostgreSQL key store beside the bench database; or off.
 */
export function benchEncryptionEnv(databaseUrl: string, encryption: 'on' | 'off' = 'on'): Record<string, string> {
  if (encryption === 'off') return { ENCRYPTION_AT_REST: 'off' };
  const directory = resolve(__dirname, '../../.cache/bench/encryption');
  mkdirSync(directory, { recursive: true, mode: 0o700 });
  const keyring = resolve(directory, 'keyring.json');
  try {
    writeFileSync(keyring, JSON.stringify({ active: 'k1', keys: { k1: randomBytes(32).toString('base64') } }), { mode: 0o600, flag: 'wx' });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  }
  return { ENCRYPTION_KEYRING_FILE: keyring, KEYSTORE_URL: benchKeyStoreUrl(databaseUrl) };
}

/**
 * What a benchmark's service process runs with: its own consumer group, topic
 * and schema, loopback ports (HTTP on any free port unless given), info logs,
 * and encryption at rest as `benchEncryptionEnv` sets it.
 */
export function benchServiceEnv(settings: {
  brokers: readonly string[];
  stamp: string;
  topic: string;
  databaseUrl: string;
  schema: string;
  roles: string;
  grpcPort: number;
  httpPort?: number;
  encryption?: 'on' | 'off';
}): Record<string, string> {
  return {
    PATH: process.env.PATH ?? '',
    KAFKA_BROKERS: settings.brokers.join(','),
    KAFKA_GROUP_ID: `bench-${settings.stamp}`,
    TOOL_EVENTS_TOPIC: settings.topic,
    DATABASE_URL: settings.databaseUrl,
    DATABASE_SCHEMA: settings.schema,
    SERVICE_ROLES: settings.roles,
    GRPC_PORT: String(settings.grpcPort),
    HTTP_PORT: String(settings.httpPort ?? 0),
    LOG_LEVEL: 'info',
    ...benchEncryptionEnv(settings.databaseUrl, settings.encryption),
  };
}

/** The built service as a child process serving gRPC only, against an existing schema; resolves once it has started. */
export async function startGrpcService(settings: { databaseUrl: string; schema: string; port: number }): Promise<ChildProcess> {
  const { spawn } = await import('node:child_process');
  const { resolve } = await import('node:path');
  const child = spawn(process.execPath, [resolve(__dirname, '../apps/toolhistory/src/main.js')], {
    env: {
      PATH: process.env.PATH ?? '',
      KAFKA_BROKERS: process.env.BENCH_KAFKA_BROKERS ?? '127.0.0.1:9092',
      DATABASE_URL: settings.databaseUrl,
      DATABASE_SCHEMA: settings.schema,
      SERVICE_ROLES: 'grpc',
      GRPC_PORT: String(settings.port),
      HTTP_PORT: '0',
      LOG_LEVEL: 'info',
      ...benchEncryptionEnv(settings.databaseUrl),
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let output = '';
  child.stdout?.on('data', (chunk) => (output = (output + chunk).slice(-20_000)));
  for (let waited = 0; !output.includes('toolhistory started'); waited += 100) {
    if (waited > 60_000 || child.exitCode !== null || child.signalCode !== null) throw new Error(`service did not start:\n${output}`);
    await sleep(100);
  }
  return child;
}

export async function stopChild(child: ChildProcess | undefined): Promise<void> {
  if (!child || child.exitCode !== null || child.signalCode !== null) return;
  child.kill('SIGTERM');
  await new Promise((done) => child.once('exit', done));
}

let benchDatabase: Promise<string> | undefined;

/**
 * The benchmarks' database, by the rule of `npm run start:local` and the
 * tests: BENCH_DATABASE_URL; else a local PostgreSQL that lets postgres in
 * without a password; else an embedded one, which stops when the benchmark's
 * process ends. Which one is printed, since the figures depend on it.
 */
export function benchDatabaseUrl(): Promise<string> {
  benchDatabase ??= (async () => {
    const root = resolve(__dirname, '../..');
    const settings = readLocalSettings(process.env, root);
    const database = await openLocalDatabase({
      variable: 'BENCH_DATABASE_URL',
      configuredUrl: process.env.BENCH_DATABASE_URL,
      database: 'toolhistory_bench',
      localPort: settings.localPostgresPort,
      embeddedDirectory: resolve(settings.embeddedPostgresDir, 'bench'),
    });
    console.error(`database: ${database.reason}`);
    return database.url;
  })();
  return benchDatabase;
}

/**
 * Runs a benchmark body against a fresh, migrated schema of its own and
 * removes it afterwards (unless `keep`); exits non-zero on failure.
 */
export function runInBenchSchema(
  prefix: string,
  keep: boolean,
  body: (bench: { pool: Pool; schema: string; databaseUrl: string }) => Promise<void>,
): void {
  const schema = `${prefix}_${Date.now().toString(36)}`;
  const run = async () => {
    const databaseUrl = await benchDatabaseUrl();
    const { createPool, runMigrations } = await import('../libs/persistence/src');
    await runMigrations(databaseUrl, schema);
    const pool = createPool({ url: databaseUrl, schema, poolSize: 4, applicationName: 'toolhistory-bench' });
    try {
      await body({ pool, schema, databaseUrl });
    } finally {
      await pool.end();
      if (!keep) await dropSchema(databaseUrl, schema);
    }
  };
  run().catch((error) => {
    console.error(error);
    process.exit(1);
  });
}

/**
 * Closed-loop load: `clients` callers each call again as soon as their last
 * call answered, for `seconds`. Latencies come back sorted, in ms.
 */
export async function closedLoopLoad(
  clients: number,
  seconds: number,
  oneCall: (client: number) => Promise<unknown>,
): Promise<{ latencies: number[]; errors: number; elapsedSeconds: number }> {
  const latencies: number[] = [];
  let errors = 0;
  const started = Date.now();
  const until = started + seconds * 1000;
  await Promise.all(
    Array.from({ length: clients }, async (_, i) => {
      while (Date.now() < until) {
        const t = process.hrtime.bigint();
        try {
          await oneCall(i);
          latencies.push(Number(process.hrtime.bigint() - t) / 1e6);
        } catch {
          errors += 1;
        }
      }
    }),
  );
  latencies.sort((a, b) => a - b);
  return { latencies, errors, elapsedSeconds: (Date.now() - started) / 1000 };
}

/**
 * Open-loop load: request i is due at `i / rate` seconds from the start and
 * is sent then whether or not earlier ones have answered; its latency runs
 * from when it was due, not from when it was sent, so a stall in the server
 * or in this process shows in the figures instead of slowing the offered
 * rate down (coordinated omission). Latencies come back sorted, in ms.
 */
export async function openLoopLoad(
  rate: number,
  seconds: number,
  oneCall: (request: number) => Promise<unknown>,
): Promise<{ latencies: number[]; errors: number; elapsedSeconds: number; offered: number; firstError?: string }> {
  const latencies: number[] = [];
  let errors = 0;
  let firstError: string | undefined;
  const total = Math.floor(rate * seconds);
  const answers: Promise<void>[] = [];
  const started = performance.now();
  for (let sent = 0; sent < total;) {
    const due = Math.min(total, Math.floor(((performance.now() - started) / 1000) * rate) + 1);
    for (; sent < due; sent += 1) {
      const dueAt = started + (sent / rate) * 1000;
      answers.push(
        oneCall(sent).then(
          () => void latencies.push(performance.now() - dueAt),
          (error: Error) => {
            errors += 1;
            firstError ??= error.message;
          },
        ),
      );
    }
    await sleep(1);
  }
  await Promise.all(answers);
  latencies.sort((a, b) => a - b);
  return { latencies, errors, elapsedSeconds: (performance.now() - started) / 1000, offered: total, firstError };
}

/**
 * The service a benchmark starts and the migrations of its schema: this
 * build's, or with BENCH_SERVICE_BUILD another checkout's (built with `npm
 * run build`), so that one benchmark build measures the service of another
 * (a before/after pair with the same measuring code).
 */
export async function benchServiceBuild(): Promise<{
  main: string;
  runMigrations: (url: string, schema: string) => Promise<unknown>;
}> {
  const root = process.env.BENCH_SERVICE_BUILD;
  if (!root) {
    const { runMigrations } = await import('../libs/persistence/src');
    return { main: resolve(__dirname, '../apps/toolhistory/src/main.js'), runMigrations };
  }
  const persistence = (await import(resolve(root, 'dist/libs/persistence/src'))) as {
    runMigrations: (url: string, schema: string) => Promise<unknown>;
  };
  console.error(`service: the build in ${resolve(root)}`);
  return { main: resolve(root, 'dist/apps/toolhistory/src/main.js'), runMigrations: persistence.runMigrations };
}

export interface BenchRecorderSettings {
  brokers: string[];
  topic: string;
  groupId: string;
  databaseUrl: string;
  schema: string;
  /** More settings for the service (a policy file, say). */
  env?: Record<string, string>;
  /** Another build's service (its main.js), to compare builds in one run; this build's by default. */
  main?: string;
}

export interface BenchService {
  child: ChildProcess;
  /** The last 20 KB the service printed. */
  output(): string;
  /** When `text` first appeared in the output (Date.now() at that chunk); fails if the service exits or a minute passes first. */
  seen(text: string): Promise<number>;
}

/** Flags for a benchmark's service node from BENCH_NODE_ARGS (e.g. "--cpu-prof --cpu-prof-dir=profiles", "--trace-gc"). */
export const benchNodeArgs = (): string[] => (process.env.BENCH_NODE_ARGS ?? '').split(' ').filter(Boolean);

/**
 * The built service recording `topic` (recorder role) as the benchmark's
 * child process. BENCH_NODE_ARGS go to node (e.g. "--cpu-prof
 * --cpu-prof-dir=profiles" profiles it), BENCH_SERVICE_ENV (JSON) overrides
 * its settings.
 */
export function spawnBenchRecorder(settings: BenchRecorderSettings): BenchService {
  const child = spawn(process.execPath, [...benchNodeArgs(), settings.main ?? resolve(__dirname, '../apps/toolhistory/src/main.js')], {
    env: {
      PATH: process.env.PATH ?? '',
      KAFKA_BROKERS: settings.brokers.join(','),
      KAFKA_GROUP_ID: settings.groupId,
      TOOL_EVENTS_TOPIC: settings.topic,
      DATABASE_URL: settings.databaseUrl,
      DATABASE_SCHEMA: settings.schema,
      SERVICE_ROLES: 'recorder',
      HTTP_PORT: '0',
      LOG_LEVEL: 'info',
      ...benchEncryptionEnv(settings.databaseUrl),
      ...settings.env,
      ...(process.env.BENCH_SERVICE_ENV ? JSON.parse(process.env.BENCH_SERVICE_ENV) : {}),
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let output = '';
  const firstSeen = new Map<string, number>();
  const watched = new Set<string>();
  child.stdout.on('data', (chunk) => {
    output = (output + chunk).slice(-20_000);
    for (const text of watched) if (!firstSeen.has(text) && output.includes(text)) firstSeen.set(text, Date.now());
  });
  return {
    child,
    output: () => output,
    async seen(text) {
      watched.add(text);
      if (!firstSeen.has(text) && output.includes(text)) firstSeen.set(text, Date.now());
      for (let waited = 0; !firstSeen.has(text); waited += 20) {
        if (waited > 60_000 || child.exitCode !== null) throw new Error(`service did not print "${text}":\n${output}`);
        await sleep(20);
      }
      return firstSeen.get(text)!;
    },
  };
}

/** The local TCP ports of a process's connections to `remotePort` on this machine (its database connections), from /proc. */
export function connectedPorts(pid: number, remotePort: number): number[] {
  let inodes: Set<string>;
  try {
    inodes = new Set(
      readdirSync(`/proc/${pid}/fd`)
        .map((fd) => {
          try {
            return /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`))?.[1];
          } catch {
            return undefined;
          }
        })
        .filter((inode): inode is string => inode !== undefined),
    );
  } catch {
    return [];
  }
  const ports: number[] = [];
  for (const table of ['tcp', 'tcp6']) {
    let text: string;
    try {
      text = readFileSync(`/proc/${pid}/net/${table}`, 'utf8');
    } catch {
      continue;
    }
    for (const line of text.split('\n').slice(1)) {
      const fields = line.trim().split(/\s+/);
      if (fields.length < 10 || !inodes.has(fields[9])) continue;
      const local = Number.parseInt(fields[1].split(':')[1], 16);
      const remote = Number.parseInt(fields[2].split(':')[1], 16);
      if (remote === remotePort) ports.push(local);
    }
  }
  return ports;
}

/** The port a PostgreSQL URL connects to. */
export const databasePort = (databaseUrl: string): number => Number(new URL(databaseUrl).port || 5432);

/**
 * The CPU a process and the PostgreSQL backends serving its connections
 * spend, from /proc: the backends are found by the process's own sockets
 * (so another process's sessions, with the same application name, never
 * count), looked for again every `sampleMs` while the meter runs, since pools
 * open and close connections. A backend that closed between two looks loses
 * what it spent after the last one.
 */
export class CpuMeter {
  private readonly first = new Map<number, number>();
  private readonly last = new Map<number, number>();
  private processStart = 0;
  private timer: NodeJS.Timeout | null = null;
  private sampling: Promise<void> = Promise.resolve();

  constructor(
    private readonly pool: Pool,
    private readonly pid: number,
    private readonly options: { databaseUrl: string; applicationName?: string; sampleMs?: number },
  ) {}

  private async backends(): Promise<number[]> {
    const ports = connectedPorts(this.pid, databasePort(this.options.databaseUrl));
    if (ports.length === 0) return [];
    const { rows } = await this.pool.query<{ pid: number }>(
      `SELECT pid FROM pg_stat_activity WHERE client_port = ANY($1::int[]) AND client_addr IS NOT NULL
         AND ($2::text IS NULL OR application_name = $2) AND pid <> pg_backend_pid()`,
      [ports, this.options.applicationName ?? null],
    );
    return rows.map((r) => r.pid);
  }

  private async sample(fromZero: boolean): Promise<void> {
    for (const pid of await this.backends()) {
      const cpu = cpuSeconds(pid);
      if (!this.first.has(pid)) this.first.set(pid, fromZero ? 0 : cpu);
      this.last.set(pid, cpu);
    }
  }

  /** Starts counting: what the process and its backends spent so far is left out. */
  async start(): Promise<void> {
    this.processStart = cpuSeconds(this.pid);
    await this.sample(false);
    this.timer = setInterval(() => {
      this.sampling = this.sampling.then(() => this.sample(true)).catch(() => undefined);
    }, this.options.sampleMs ?? 200);
  }

  /** CPU seconds so far: the process's and its backends'. */
  async read(): Promise<{ process: number; database: number; backends: number }> {
    await this.sampling;
    await this.sample(true);
    let database = 0;
    for (const [pid, first] of this.first) database += (this.last.get(pid) ?? first) - first;
    return { process: cpuSeconds(this.pid) - this.processStart, database, backends: this.first.size };
  }

  async stop(): Promise<{ process: number; database: number; backends: number }> {
    const figures = await this.read();
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.sampling;
    return figures;
  }
}

/** CPU seconds of every live PostgreSQL server process (its name is `postgres`), by pid. */
function postgresCpuSeconds(): Map<number, number> {
  const seconds = new Map<number, number>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
    } catch {
      continue;
    }
    if (stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')')) !== 'postgres') continue;
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    seconds.set(Number(entry), (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS_PER_SECOND);
  }
  return seconds;
}

function localBrokerPid(): number | null {
  try {
    return Number(readFileSync(resolve(__dirname, '../../.cache/kafka/broker.pid'), 'utf8').trim()) || null;
  } catch {
    return null;
  }
}

/**
 * Where a stretch of a benchmark's CPU went, in seconds: each named service
 * process, the PostgreSQL backends serving their connections, every
 * PostgreSQL process (backends, WAL writer, checkpointer, autovacuum), the
 * local Kafka broker (`npm run kafka:start`; NaN without one), this process
 * (load generator and producer), the rest of the machine's busy time
 * (other programs, the kernel's threads, a hypervisor's steal), and the
 * whole machine (busy, and total CPU time). PostgreSQL's processes are
 * looked at every `sampleMs`, as CpuMeter looks for backends: one that ends
 * loses what it spent after the last look, one that starts counts from
 * zero. (A parent's reaped time would count a child's whole life, from
 * before the account started.)
 */
export class CpuAccount {
  private readonly meters: ReadonlyArray<[string, CpuMeter]>;
  private before = new Map<string, number>();
  private readonly postgresFirst = new Map<number, number>();
  private readonly postgresLast = new Map<number, number>();
  private postgresTimer: NodeJS.Timeout | null = null;
  private machine = machineCpuSeconds();

  constructor(
    pool: Pool,
    databaseUrl: string,
    processes: Readonly<Record<string, number>>,
    private readonly benchLabel = 'bench',
    private readonly sampleMs = 200,
  ) {
    this.meters = Object.entries(processes).map(([name, pid]) => [name, new CpuMeter(pool, pid, { databaseUrl })]);
  }

  private read(): Map<string, number> {
    const broker = localBrokerPid();
    return new Map([
      ['kafkaBroker', broker ? cpuSeconds(broker) : NaN],
      [this.benchLabel, cpuSeconds(process.pid)],
    ]);
  }

  async start(): Promise<void> {
    for (const [, meter] of this.meters) await meter.start();
    this.machine = machineCpuSeconds();
    this.samplePostgres(false);
    this.postgresTimer = setInterval(() => this.samplePostgres(true), this.sampleMs);
    this.before = this.read();
  }

  private samplePostgres(fromZero: boolean): void {
    for (const [pid, seconds] of postgresCpuSeconds()) {
      if (!this.postgresFirst.has(pid)) this.postgresFirst.set(pid, fromZero ? 0 : seconds);
      this.postgresLast.set(pid, seconds);
    }
  }

  async stop(): Promise<Record<string, number>> {
    const split: Record<string, number> = {};
    let backends = 0;
    for (const [name, meter] of this.meters) {
      const spent = await meter.stop();
      split[name] = tenth(spent.process);
      backends += spent.database;
    }
    split.postgresBackends = tenth(backends);
    if (this.postgresTimer) clearInterval(this.postgresTimer);
    this.samplePostgres(true);
    let postgres = 0;
    for (const [pid, first] of this.postgresFirst) postgres += (this.postgresLast.get(pid) ?? first) - first;
    split.postgresAll = tenth(postgres);
    for (const [name, seconds] of this.read()) split[name] = tenth(seconds - (this.before.get(name) ?? 0));
    const machine = machineCpuSeconds();
    const busy = machine.busy - this.machine.busy;
    // What no process above was charged with: other programs, the kernel's own threads, a hypervisor's steal.
    const named = Object.entries(split)
      .filter(([name]) => name !== 'postgresBackends')
      .reduce((sum, [, seconds]) => sum + (Number.isNaN(seconds) ? 0 : seconds), 0);
    split.restOfMachine = tenth(busy - named);
    split.machineBusy = tenth(busy);
    split.machineTotal = tenth(machine.total - this.machine.total);
    return split;
  }
}

const tenth = (x: number) => Math.round(x * 10) / 10;

/**
 * Hardware instruction counts of processes with `perf stat`, where the
 * machine gives them (not in most virtual machines): `start` attaches to
 * the pids, `stop` answers the instructions counted, or null and why not.
 */
export class InstructionCounter {
  private child: ChildProcess | null = null;
  private output = '';
  private static supported: Promise<string | null> | undefined;

  /** Null when instructions can be counted here; else why not. */
  static unsupported(): Promise<string | null> {
    InstructionCounter.supported ??= new Promise((done) => {
      const probe = spawn('perf', ['stat', '-x,', '-e', 'instructions', '--', 'true'], { stdio: ['ignore', 'ignore', 'pipe'] });
      let err = '';
      probe.stderr.on('data', (c) => (err += c));
      probe.on('error', () => done('perf is not installed'));
      probe.on('exit', (code) => {
        if (code !== 0) return done(`perf stat failed: ${err.trim().split('\n')[0]}`);
        const line = err.split('\n').find((l) => l.includes('instructions')) ?? '';
        done(/^\d/.test(line) ? null : 'perf stat: instructions <not supported> (no hardware counters on this machine)');
      });
    });
    return InstructionCounter.supported;
  }

  async start(pids: readonly number[]): Promise<string | null> {
    const why = await InstructionCounter.unsupported();
    if (why !== null || pids.length === 0) return why ?? 'no process to count';
    this.child = spawn('perf', ['stat', '-x,', '-e', 'instructions', '-p', pids.join(',')], { stdio: ['ignore', 'ignore', 'pipe'] });
    this.child.stderr?.on('data', (c) => (this.output += c));
    return null;
  }

  async stop(): Promise<number | null> {
    const child = this.child;
    if (!child) return null;
    this.child = null;
    child.kill('SIGINT');
    await new Promise((done) => child.once('exit', done));
    const line = this.output.split('\n').find((l) => l.includes('instructions')) ?? '';
    const count = Number(line.split(',')[0]);
    return Number.isFinite(count) && /^\d/.test(line) ? count : null;
  }
}

export const median = (values: readonly number[]): number => {
  const sorted = [...values].filter((v) => Number.isFinite(v)).sort((a, b) => a - b);
  if (sorted.length === 0) return NaN;
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
};
