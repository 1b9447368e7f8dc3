/**
 * Overload benchmark: turn-start replays offered at a multiple of what the
 * service sustains, beside steady ingest (docs/adr/030-admission-control.md).
 *
 *   npm run bench:overload -- [--multiple 3] [--flood-seconds 30] [--measure-seconds 10] [--after-seconds 30]
 *                             [--ingest-rate 500] [--deadline-ms 2000] [--callers 8] [--floods 1]
 *                             [--generator go|node [--threads 2] [--client http2|grpc-js]]
 *                             [--other-invocations 10000] [--keep]
 *                             [--service-cpus 0 --generator-cpus 1] [--own-session] [--split-roles]
 *                             [--caller-window-kib 16384] [--floor]
 *
 * One service process with every role (recorder and gRPC), as `npm start`
 * runs it by default, on loopback; BENCH_SERVICE_ENV (JSON) overrides its
 * settings. --split-roles runs the roles in two processes instead, as
 * docs/operating.md "Scaling out" does (SERVICE_ROLES=grpc flooded,
 * SERVICE_ROLES=recorder beside it): the figures of the gRPC process are
 * then the flooded one's, and recording is read from the recorder's.
 * Phases, with ingest of other conversations at --ingest-rate events/s
 * throughout:
 *   1. recording alone for --measure-seconds: the recording rate without reads;
 *   2. sustainable: --callers callers in a closed loop for --measure-seconds
 *      (from the load generator): the replay rate the service sustains,
 *      measured again before each flood (the machine's other load moves it);
 *   3. flood: --multiple times that rate in an open loop (each call with a
 *      --deadline-ms deadline, no retries) for --flood-seconds, over the
 *      --callers connections, probing health every 500 ms;
 *   4. after: --after-seconds of ingest only, then RSS and a light load;
 *   5. with --floor, the same flood again at once against the floor
 *      (overload-floor.ts): a bare HTTP/2 server sending the service's own
 *      answer at the rate the service answered and refusing the rest, so each
 *      flood's time to refusal stands beside what the machine and the
 *      generator gave the least possible server in the same hour.
 * The load generator (--generator, flood-generator.ts) shares the two cores
 * with the service, so what it spends a call the service does not get. By
 * default it is bench/floodgen, grpc-go's client in a process of its own
 * (built with the machine's Go, ADR 038); --generator node sends from
 * --threads Node.js worker threads instead, as bare HTTP/2 connections
 * (--client http2, about two and a half times the Go generator's CPU a
 * call) or grpc-js clients (--client grpc-js, more still). Either speaks gRPC's wire format with the
 * client package's flow-control window unless --caller-window-kib sets
 * another (what an answer's bytes may run ahead of its caller's reading, and
 * so what a refusal on the same connection may queue behind).
 * --floods repeats 3 and 4 (the process must survive every one).
 * --own-session starts the service in a session of its own, as a process
 * manager or a terminal of its own would: where the kernel schedules by
 * autogroup, the CPUs are then shared between the service and this process
 * as between two programs, not one for one between their threads.
 * Reports, per flood: time to refusal (p50, p99), the share of calls that
 * met their deadline, answered rate against the sustainable rate, the
 * recording rate against its rate without reads, health answers, RSS
 * before / peak / after, and the gRPC process's CPU per request from /proc
 * beside wall-clock (wall-clock on a small shared machine swings between
 * runs; CPU per request much less), and how busy the machine's CPUs were
 * (/proc/stat; at 1, the service and its callers wait for a CPU), with
 * the flood's CPU seconds process by process: the service, its PostgreSQL
 * backends, all of PostgreSQL, the local broker, the load generator and this
 * process (the ingest producer and health probes; with --generator node, the
 * load generator too), as for recording alone; and how
 * the sustainable phase's replays were answered (cached history, cached
 * rows, a read; version checks). The last line printed is one JSON object.
 * BENCH_NODE_ARGS adds flags to the service's node; BENCH_SERVICE_LOG names
 * a file that gets the service's whole output.
 * --service-cpus and --generator-cpus (both or neither, `taskset` lists such
 * as `0` or `0-3`) keep the service's process and this one with the load
 * generator (callers, health probes and ingest) on CPUs of their own, as
 * callers are in production; the database and the broker stay where the system puts them.
 */
import * as grpc from '@grpc/grpc-js';
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { appendFileSync, readFileSync } from 'node:fs';
import { constants } from 'node:os';
import { resolve } from 'node:path';
import { Partitioners } from 'kafkajs';
import { createPool, ensureDatabase, runMigrations } from '../libs/persistence/src';
import type { ToolEvent } from '../libs/contract/src';
import { freePort, toolHistoryClient } from '../test/support/grpc-client';
import { agentTraffic } from '../test/support/traffic';
import {
  counterTotal,
  histogramBuckets,
  type FloodClient,
  histogramPercentileMs,
  replayAnswerBytes,
  rssMiB,
  summarize,
} from '../test/support/flood';
import { CONFIG_DEFAULTS } from '../libs/config/src';
import {
  benchKafka,
  benchDatabaseUrl,
  benchServiceEnv,
  benchNodeArgs,
  cpuSeconds,
  CpuAccount,
  createBenchTopics,
  intOption,
  machineCpuSeconds,
  parseArgs,
  sleep,
  teardownBench,
} from './bench-support';
import { BENCH_CONVERSATION, BENCH_TENANT, benchConversation, SEED_SQL } from './replay-fixture';
import { startFloorServer } from './overload-floor';
import { type GeneratorKind, goGenerator, type LoadGenerator, nodeGenerator } from './flood-generator';

const BROKERS = (process.env.BENCH_KAFKA_BROKERS ?? '127.0.0.1:9092').split(',');
const TURNS = 20;
const STALE_TURNS = 10;

/** The JS heap V8 has (used of total) and the memory held outside it, in MiB, from a scrape. */
const memoryOf = (exposition: string) => {
  const mib = (name: string) => Math.round(counterTotal(exposition, name) / 1024 / 1024);
  return {
    heapUsed: mib('nodejs_heap_size_used_bytes'),
    heapTotal: mib('nodejs_heap_size_total_bytes'),
    external: mib('nodejs_external_memory_bytes'),
  };
};

/** How much of every CPU the machine was busy between two readings of machineCpuSeconds(). */
const busyShare = (before: { busy: number; total: number }, after: { busy: number; total: number }) =>
  (after.busy - before.busy) / Math.max(1e-9, after.total - before.total);

const round = (x: number, digits = 2) => (Number.isFinite(x) ? Math.round(x * 10 ** digits) / 10 ** digits : null);

/** The CPUs of the service and of the load generator, when both are given. */
function cpuPinning(service: string | undefined, generator: string | undefined): { service: string; generator: string } | undefined {
  if (service === undefined && generator === undefined) return undefined;
  if (service === undefined || generator === undefined) throw new Error('--service-cpus and --generator-cpus go together');
  for (const [name, list] of [
    ['service-cpus', service],
    ['generator-cpus', generator],
  ])
    if (!/^\d+(-\d+)?(,\d+(-\d+)?)*$/.test(list)) throw new Error(`--${name} must be a CPU list such as 0 or 0-3, got ${list}`);
  return { service, generator };
}

/** Whether the kernel shares CPU time between sessions before threads (`kernel.sched_autogroup_enabled`). */
function autogroupScheduling(): 'on' | 'off' | 'unknown' {
  try {
    return readFileSync('/proc/sys/kernel/sched_autogroup_enabled', 'utf8').trim() === '1' ? 'on' : 'off';
  } catch {
    return 'unknown';
  }
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      multiple: { type: 'string' },
      'flood-seconds': { type: 'string' },
      'measure-seconds': { type: 'string' },
      'after-seconds': { type: 'string' },
      'ingest-rate': { type: 'string' },
      'deadline-ms': { type: 'string' },
      callers: { type: 'string' },
      floods: { type: 'string' },
      generator: { type: 'string' },
      threads: { type: 'string' },
      'other-invocations': { type: 'string' },
      client: { type: 'string' },
      keep: { type: 'boolean' },
      'service-cpus': { type: 'string' },
      'generator-cpus': { type: 'string' },
      'own-session': { type: 'boolean' },
      'split-roles': { type: 'boolean' },
      'caller-window-kib': { type: 'string' },
      floor: { type: 'boolean' },
    },
  });
  const pinning = cpuPinning(values['service-cpus'], values['generator-cpus']);
  const ownSession = values['own-session'] === true;
  const splitRoles = values['split-roles'] === true;
  const withFloor = values.floor === true;
  const multiple = Number(values.multiple ?? 3);
  if (!(multiple > 0)) throw new Error(`--multiple must be above 0, got ${values.multiple}`);
  const floodSeconds = intOption(values, 'flood-seconds', 30);
  const measureSeconds = intOption(values, 'measure-seconds', 10);
  const afterSeconds = intOption(values, 'after-seconds', 30);
  const ingestRate = intOption(values, 'ingest-rate', 500, { zero: true });
  const deadlineMs = intOption(values, 'deadline-ms', 2_000);
  const callers = intOption(values, 'callers', 8);
  const floods = intOption(values, 'floods', 1);
  const generatorKind = (values.generator ?? 'go') as GeneratorKind;
  if (generatorKind !== 'go' && generatorKind !== 'node') throw new Error(`--generator must be go or node, got ${values.generator}`);
  if (generatorKind === 'go' && (values.threads !== undefined || values.client !== undefined))
    throw new Error('--threads and --client choose how the Node.js generator sends: use them with --generator node');
  const threads = intOption(values, 'threads', 2);
  const others = intOption(values, 'other-invocations', 10_000);
  const client = (values.client ?? 'http2') as FloodClient;
  if (client !== 'http2' && client !== 'grpc-js') throw new Error(`--client must be http2 or grpc-js, got ${values.client}`);
  const windowKib = values['caller-window-kib'] === undefined ? undefined : intOption(values, 'caller-window-kib', 0);
  if (windowKib !== undefined && client !== 'http2')
    throw new Error("--caller-window-kib sets the bare HTTP/2 callers' window: use it with --client http2 or --generator go");
  if (windowKib !== undefined && (windowKib < 64 || windowKib > 2 ** 31 / 1024 - 1))
    throw new Error(`--caller-window-kib must be between 64 and ${2 ** 31 / 1024 - 1} (HTTP/2's window), got ${windowKib}`);
  const windowBytes = windowKib === undefined ? undefined : windowKib * 1024;
  const DATABASE_URL = await benchDatabaseUrl();

  const serviceEnvGiven = process.env.BENCH_SERVICE_ENV ? (JSON.parse(process.env.BENCH_SERVICE_ENV) as Record<string, string>) : {};
  const stamp = Date.now().toString(36);
  const schema = `bench_overload_${stamp}`;
  const topic = `bench-overload-${stamp}`;
  await ensureDatabase(DATABASE_URL);
  await runMigrations(DATABASE_URL, schema);
  const pool = createPool({ url: DATABASE_URL, schema, poolSize: 1, applicationName: 'toolhistory-bench' });
  for (const statement of SEED_SQL.split(';')
    .map((s) => s.trim())
    .filter(Boolean))
    await pool.query(statement, [others]);
  await pool.query('ANALYZE');

  const kafka = benchKafka(BROKERS);
  const admin = kafka.admin();
  await admin.connect();
  await createBenchTopics(admin, topic, 6);
  const [port, httpPort] = [await freePort(), await freePort()];
  // The recorder's metrics: the service's own, unless --split-roles runs the recorder apart.
  const recorderHttpPort = splitRoles ? await freePort() : httpPort;
  // Every thread of this process, and the worker threads and processes it starts later (they inherit it), on the
  // generator's CPUs.
  if (pinning) execFileSync('taskset', ['--all-tasks', '--cpu-list', '--pid', pinning.generator, String(process.pid)], { stdio: 'ignore' });
  const generator: LoadGenerator = generatorKind === 'go' ? await goGenerator() : nodeGenerator(threads, client);
  const callersName = generatorKind === 'go' ? 'grpc-go' : client;
  const serviceCommand = [process.execPath, ...benchNodeArgs(), resolve(__dirname, '../apps/toolhistory/src/main.js')];
  const [serviceFile, ...serviceArgs] = pinning ? ['taskset', '--cpu-list', pinning.service, ...serviceCommand] : serviceCommand;
  /** A service process with `roles`; its output is kept (the last 20 kB) and, with BENCH_SERVICE_LOG, written to that file. */
  const startProcess = (roles: string, ports: { grpc: number; http: number }) => {
    // --own-session: a session of its own, as a process manager or a terminal of its own starts the service
    // (docs/benchmarks.md, "A slower machine, and the service in a session of its own").
    const child: ChildProcess = spawn(serviceFile, serviceArgs, {
      env: {
        ...benchServiceEnv({
          brokers: BROKERS,
          stamp,
          topic,
          databaseUrl: DATABASE_URL,
          schema,
          roles,
          grpcPort: ports.grpc,
          httpPort: ports.http,
        }),
        ...serviceEnvGiven,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: ownSession,
    });
    const started = { child, output: '', alive: () => child.exitCode === null && child.signalCode === null };
    const keep = (chunk: Buffer) => (started.output = (started.output + chunk.toString()).slice(-20_000));
    child.stdout!.on('data', keep);
    // BENCH_SERVICE_LOG: the service's whole output in a file too (e.g. with BENCH_NODE_ARGS=--trace-gc).
    if (process.env.BENCH_SERVICE_LOG) child.stdout!.on('data', (chunk: Buffer) => appendFileSync(process.env.BENCH_SERVICE_LOG!, chunk));
    child.stderr!.on('data', keep);
    return started;
  };
  const grpcProcess = startProcess(splitRoles ? 'grpc' : 'recorder,grpc', { grpc: port, http: httpPort });
  const service = grpcProcess.child;
  const processes = splitRoles
    ? [grpcProcess, startProcess('recorder', { grpc: await freePort(), http: recorderHttpPort })]
    : [grpcProcess];
  const alive = () => processes.every((p) => p.alive());
  const output = () => processes.map((p) => p.output).join('\n');
  // Stopped with this process: in a session of its own, the service does not get the terminal's Ctrl-C.
  const stopService = () => {
    for (const p of processes) if (p.alive()) p.child.kill('SIGTERM');
  };
  process.once('exit', stopService);
  for (const signal of ['SIGINT', 'SIGTERM'] as const)
    process.once(signal, () => {
      stopService();
      process.exit(128 + constants.signals[signal]);
    });
  const producer = kafka.producer({ createPartitioner: Partitioners.DefaultPartitioner });
  const health = toolHistoryClient(port);
  const request = { tenant_id: BENCH_TENANT, conversation_id: BENCH_CONVERSATION };
  const scrape = async () => (await fetch(`http://127.0.0.1:${httpPort}/metrics`)).text();
  const recordedTotal = async () =>
    counterTotal(await (await fetch(`http://127.0.0.1:${recorderHttpPort}/metrics`)).text(), 'toolhistory_events_recorded_total');
  /** Events recorded so far, from a scrape of the service just taken when the recorder is in it. */
  const recordedBy = async (exposition: string) =>
    splitRoles ? recordedTotal() : counterTotal(exposition, 'toolhistory_events_recorded_total');
  /** The server's own time to refusal: from the call reaching the server to its RESOURCE_EXHAUSTED. */
  const refusalBuckets = (exposition: string) =>
    histogramBuckets(exposition, 'toolhistory_grpc_server_handling_seconds', {
      method: '/toolhistory.v1.ToolHistory/GetReplayHistory',
      code: 'RESOURCE_EXHAUSTED',
    });

  let ingesting = true;
  let ingest: Promise<void> = Promise.resolve();
  try {
    await producer.connect();
    for (let waited = 0; !processes.every((p) => p.output.includes('toolhistory started')); waited += 100) {
      if (waited > 60_000 || !alive()) throw new Error(`service did not start:\n${output()}`);
      await sleep(100);
    }
    const conversation = benchConversation(TURNS, STALE_TURNS);
    await producer.send({ topic, acks: -1, messages: conversation.map((e) => ({ key: e.conversationId, value: JSON.stringify(e) })) });
    for (let waited = 0; ; waited += 200) {
      const response = await health.getReplayHistory(request).catch(() => ({ turns: [] }));
      if (response.turns.length === TURNS - STALE_TURNS) break;
      if (waited > 60_000) throw new Error(`the bench conversation did not become replayable (turns: ${response.turns.length})`);
      await sleep(200);
    }

    // --floor: the service's own answer, for the floor to send.
    const answer = withFloor ? await replayAnswerBytes(port, request) : undefined;

    // Ingest of other conversations at the offered rate, for the whole run: enough events for every phase of every
    // flood (the floor's flood too), with room to spare. Should they run out all the same, the figures say so.
    const secondsPerFlood = 3 + measureSeconds + floodSeconds * (withFloor ? 2 : 1) + afterSeconds + 30;
    const traffic = agentTraffic(ingestRate * (measureSeconds * 3 + secondsPerFlood * floods + 60), {
      seed: 5,
      conversations: 10_000,
    });
    let ingestRanDry = false;
    ingest = (async () => {
      const start = Date.now();
      let sent = 0;
      while (ingesting) {
        const due = Math.floor(((Date.now() - start) / 1000) * ingestRate);
        const batch: ToolEvent[] = [];
        while (sent + batch.length < due) {
          const next = traffic.next();
          if (next.done) {
            if (!ingestRanDry) console.log('  ingest ran out of generated events: from here on nothing is offered to record');
            ingestRanDry = true;
            break;
          }
          batch.push(next.value);
        }
        if (batch.length > 0) {
          sent += batch.length;
          await producer.send({ topic, messages: batch.map((e) => ({ key: e.conversationId, value: JSON.stringify(e) })) });
        }
        await sleep(20);
      }
    })();
    const recordingRate = async (seconds: number, during?: Promise<unknown>) => {
      const before = await recordedTotal();
      const t = performance.now();
      if (during) await during;
      else await sleep(seconds * 1000);
      return ((await recordedTotal()) - before) / ((performance.now() - t) / 1000);
    };

    /**
     * Where a phase's CPU goes, process by process (bench-support.ts): the service's processes (and `others`),
     * their PostgreSQL backends, all of PostgreSQL, the broker, the load generator and this process (the ingest
     * producer and health probes; the load generator too with --generator node).
     */
    const cpuAccount = (others: Record<string, number> = {}) =>
      new CpuAccount(
        pool,
        DATABASE_URL,
        {
          ...Object.fromEntries(processes.map((p, i) => [splitRoles ? ['grpc', 'recorder'][i] : 'service', p.child.pid!])),
          // The Node.js generator runs in this process, so it is this process's label below.
          ...(generator.kind === 'go' ? { loadGenerator: generator.pid } : {}),
          ...others,
        },
        generator.kind === 'go' ? 'benchProcess' : 'loadGenerator',
      );

    // 1. Recording alone (after a few seconds for the consumer to settle into the rate).
    await sleep(5_000);
    const aloneAccount = cpuAccount();
    await aloneAccount.start();
    const recordingAlone = await recordingRate(measureSeconds);
    const recordingAloneCpu = await aloneAccount.stop();
    console.log(
      `callers' flow-control window: ${windowKib === undefined ? "the client package's" : `${windowKib} KiB`}; ` +
        `service: ${splitRoles ? 'two processes (gRPC, recorder)' : 'one process with every role'} in ${ownSession ? 'a session of its own' : "this process's session"} (autogroup scheduling ${autogroupScheduling()})`,
    );
    console.log(
      `recording alone: ${Math.round(recordingAlone)} events/s (ingest offered ${ingestRate}/s); ` +
        `CPU seconds by process over ${measureSeconds} s: ${JSON.stringify(recordingAloneCpu)}`,
    );

    // 2. Sustainable: a closed loop of callers (from the flood's generator), after a warm-up. Measured again
    // before each flood: on a shared machine what the service sustains moves with the machine's other load.
    const closed = async (seconds: number, count = callers) =>
      (await generator.run({ loop: 'closed', port, callers: count, rate: 0, seconds, request, deadlineMs, windowBytes })).results;
    await closed(3);
    /** How the service answered replays so far (its replay cache's counters), from a scrape. */
    const replayAnswers = (exposition: string) => ({
      ...Object.fromEntries(
        ['cached_history', 'cached_rows', 'read'].map((answer) => [
          answer,
          counterTotal(exposition, 'toolhistory_replay_requests_total', { answer }),
        ]),
      ),
      version_checks: counterTotal(exposition, 'toolhistory_replay_version_checks_total'),
    });
    const measureSustainable = async () => {
      const answersBefore = replayAnswers(await scrape());
      const cpuBefore = cpuSeconds(service.pid!);
      const started = performance.now();
      const results = await closed(measureSeconds);
      const elapsed = (performance.now() - started) / 1000;
      const summary = summarize(results);
      const measured = {
        perSecond: summary.answered / elapsed,
        p99Ms: summary.answeredP99Ms,
        cpuMsPerReplay: ((cpuSeconds(service.pid!) - cpuBefore) * 1000) / Math.max(1, summary.answered),
      };
      const answersAfter = replayAnswers(await scrape());
      const answeredBy = Object.fromEntries(
        Object.entries(answersAfter).map(([how, n]) => [how, n - answersBefore[how as keyof typeof answersBefore]]),
      );
      console.log(
        `sustainable: ${Math.round(measured.perSecond)} replays/s with ${callers} callers (p50 ${round(summary.answeredP50Ms)} ms, ` +
          `p99 ${round(summary.answeredP99Ms)} ms, ${summary.refused + summary.deadlines + summary.other} not answered); ` +
          `gRPC process ${round(measured.cpuMsPerReplay)} ms CPU a replay; answered by ${JSON.stringify(answeredBy)}`,
      );
      return { ...measured, answeredBy };
    };

    /** An open loop of `rate` calls a second for --flood-seconds to 127.0.0.1:`target`, from the load generator. */
    const floodAt = (target: number, rate: number) =>
      generator.run({ loop: 'open', port: target, callers, rate, seconds: floodSeconds, request, deadlineMs, windowBytes });

    /** The flood just run, again at `rate` for as long, against the floor answering `answeredPerSecond` (overload-floor.ts). */
    const floodTheFloor = async (answerBytes: Buffer, rate: number, answeredPerSecond: number) => {
      const floorServer = await startFloorServer({
        answer: answerBytes,
        answeredPerSecond: Math.max(1, answeredPerSecond),
        burst: Number({ ...CONFIG_DEFAULTS, ...serviceEnvGiven }.ADMISSION_REPLAY_MAX_IN_FLIGHT),
      });
      try {
        const account = cpuAccount({ floor: floorServer.pid });
        await account.start();
        const cpu = cpuSeconds(floorServer.pid);
        const generatorCpu = cpuSeconds(generator.pid);
        const machineCpu = machineCpuSeconds();
        const started = performance.now();
        const { results, generatorLagP99Ms } = await floodAt(floorServer.port, rate);
        const machineCpuAfter = machineCpuSeconds();
        const floorCpu = cpuSeconds(floorServer.pid) - cpu;
        const cpuByProcess = await account.stop();
        const summary = summarize(results);
        return {
          answeredPerSecond: Math.round(summary.answered / floodSeconds),
          refused: summary.refused,
          deadlines: summary.deadlines,
          otherFailures: summary.otherCodes,
          refusalP50Ms: round(summary.refusalP50Ms),
          refusalP99Ms: round(summary.refusalP99Ms),
          refusalFromSentP99Ms: round(summary.refusalFromSentP99Ms),
          cpuSeconds: round(floorCpu),
          cpuMsPerCall: round((floorCpu * 1000) / Math.max(1, summary.requests), 3),
          generatorCpuSeconds: round(cpuSeconds(generator.pid) - generatorCpu),
          machineBusyShare: round(busyShare(machineCpu, machineCpuAfter), 3),
          cpuSecondsByProcess: cpuByProcess,
          generatorEventLoopLagP99Ms: round(generatorLagP99Ms),
          wallSeconds: round((performance.now() - started) / 1000),
        };
      } finally {
        await floorServer.stop();
      }
    };

    const runs = [];
    for (let n = 1; n <= floods && alive(); n += 1) {
      await sleep(3_000);
      const sustained = await measureSustainable();
      const sustainable = sustained.perSecond;
      const rssBefore = rssMiB(service.pid!);
      const memoryBefore = memoryOf(await scrape());
      const rate = Math.round(sustainable * multiple);
      console.log(
        `flood ${n}/${floods}: ${rate} replays/s offered (${multiple} x sustainable) for ${floodSeconds} s, deadline ${deadlineMs} ms, ${callersName} callers${pinning ? ` (service on CPUs ${pinning.service}, load generator on ${pinning.generator})` : ''}`,
      );
      // Health, as an orchestrator probes it, and the process's memory, while the flood lasts.
      const probes: Record<string, number> = {};
      let rssPeak = rssBefore ?? 0;
      let flooding = true;
      const watching = (async () => {
        while (flooding) {
          const answer = await health.healthCheck().catch((e: grpc.ServiceError) => `error ${grpc.status[e.code] ?? e.code}`);
          probes[answer] = (probes[answer] ?? 0) + 1;
          rssPeak = Math.max(rssPeak, rssMiB(service.pid!) ?? 0);
          await sleep(500);
        }
      })();
      const account = cpuAccount();
      await account.start();
      const cpu = cpuSeconds(service.pid!);
      const generatorCpu = cpuSeconds(generator.pid);
      const machineCpu = machineCpuSeconds();
      const wallStart = performance.now();
      // A scrape also resets the service's event loop delay percentiles: the next one gives the flood's.
      const exposition = await scrape();
      const recordedBefore = await recordedBy(exposition);
      const refusalsBefore = refusalBuckets(exposition);
      const { results, generatorLagP99Ms } = await floodAt(port, rate);
      const floodElapsed = (performance.now() - wallStart) / 1000;
      const floodCpu = cpuSeconds(service.pid!) - cpu;
      const floodGeneratorCpu = cpuSeconds(generator.pid) - generatorCpu;
      const machineCpuAfter = machineCpuSeconds();
      const cpuByProcess = await account.stop();
      // How much of every CPU the machine was busy (service, generator, database, broker): at 1, callers and
      // service wait for a CPU, and that wait shows as both's latency.
      const machineBusyShare = busyShare(machineCpu, machineCpuAfter);
      const expositionAfter = alive() ? await scrape() : '';
      const recordedDuring = alive() ? ((await recordedBy(expositionAfter)) - recordedBefore) / floodElapsed : 0;
      const refusalsAfter = refusalBuckets(expositionAfter);
      const serviceLagP99Ms = round(counterTotal(expositionAfter, 'nodejs_eventloop_lag_p99_seconds') * 1000);
      const serverRefusalP50Ms = histogramPercentileMs(refusalsBefore, refusalsAfter, 50);
      const serverRefusalP99Ms = histogramPercentileMs(refusalsBefore, refusalsAfter, 99);
      const refusalReasons = Object.fromEntries(
        ['full', 'waited', 'shed'].map((reason) => {
          const refused = (text: string) => counterTotal(text, 'toolhistory_admission_refusals_total', { lane: 'replay', reason });
          return [reason, refused(expositionAfter) - refused(exposition)];
        }),
      );
      // Refused from their headers, before grpc-js made calls of them (also among refusalReasons.full).
      const refusedAtStream =
        counterTotal(expositionAfter, 'toolhistory_admission_refused_at_stream_total') -
        counterTotal(exposition, 'toolhistory_admission_refused_at_stream_total');
      flooding = false;
      await watching;
      const summary = summarize(results);
      const answeredRate = summary.answered / floodSeconds;

      // After: the memory it keeps, and the latency a light load sees again.
      const rssSamples: number[] = [];
      for (let waited = 0; waited < afterSeconds * 1000 && alive(); waited += 1_000) {
        await sleep(1_000);
        rssSamples.push(rssMiB(service.pid!) ?? 0);
        rssPeak = Math.max(rssPeak, rssSamples.at(-1)!);
      }
      const memoryAfter = alive() ? memoryOf(await scrape()) : null;
      const lightSummary = summarize(alive() ? await closed(2, 2) : []);
      // --floor: the same flood, at once, against the least a server must do for it.
      const floor = answer && alive() ? await floodTheFloor(answer, rate, answeredRate) : undefined;
      const figures = {
        flood: n,
        sustainablePerSecond: Math.round(sustainable),
        sustainableP99Ms: round(sustained.p99Ms),
        sustainableCpuMsPerReplay: round(sustained.cpuMsPerReplay, 3),
        sustainableAnsweredBy: sustained.answeredBy,
        offeredPerSecond: rate,
        requests: summary.requests,
        answered: summary.answered,
        refused: summary.refused,
        deadlines: summary.deadlines,
        otherFailures: summary.otherCodes,
        refusalP50Ms: round(summary.refusalP50Ms),
        refusalP99Ms: round(summary.refusalP99Ms),
        // The same refusals timed from when the generator sent them: what is left once its own lateness is out.
        refusalFromSentP50Ms: round(summary.refusalFromSentP50Ms),
        refusalFromSentP99Ms: round(summary.refusalFromSentP99Ms),
        serverRefusalP50MsAtMost: serverRefusalP50Ms,
        serverRefusalP99MsAtMost: serverRefusalP99Ms,
        refusalReasons,
        refusedAtStream,
        refusalsWithPushback: summary.refusalsWithPushback,
        pushbackP50Ms: round(summary.pushbackP50Ms),
        deadlineShare: round(summary.deadlineShare, 4),
        answeredPerSecond: Math.round(answeredRate),
        answeredP99Ms: round(summary.answeredP99Ms),
        answeredVsSustainable: round(answeredRate / sustainable, 3),
        recordingPerSecond: Math.round(recordedDuring),
        recordingVsAlone: round(recordedDuring / recordingAlone, 3),
        healthProbes: probes,
        rssBeforeMiB: rssBefore,
        rssPeakMiB: rssPeak,
        rssAfterMiB: rssSamples.at(-1) ?? null,
        rssAfterVsBefore: rssBefore && rssSamples.length > 0 ? round(rssSamples.at(-1)! / rssBefore, 3) : null,
        // What the RSS is made of, before and after: the JS heap V8 keeps (used of total), and memory outside it.
        memoryBeforeMiB: memoryBefore,
        memoryAfterMiB: memoryAfter,
        serviceCpuSeconds: round(floodCpu),
        serviceCpuMsPerCall: round((floodCpu * 1000) / Math.max(1, summary.requests), 3),
        generatorCpuSeconds: round(floodGeneratorCpu),
        generatorCpuMsPerCall: round((floodGeneratorCpu * 1000) / Math.max(1, summary.requests), 3),
        machineBusyShare: round(machineBusyShare, 3),
        cpuSecondsByProcess: cpuByProcess,
        serviceEventLoopLagP99Ms: serviceLagP99Ms,
        generatorEventLoopLagP99Ms: round(generatorLagP99Ms),
        // A load generator whose own event loop runs late misses deadlines and resets streams whatever the service
        // does: past a quarter of the deadline, the flood's figures are the generator's, not the service's.
        generatorKeptUp: generatorLagP99Ms < deadlineMs / 4,
        wallSeconds: round(floodElapsed),
        lightLoadP99MsAfter: round(lightSummary.answeredP99Ms),
        processAlive: alive(),
        // No ingest (its events ran out): recording has nothing to do, and the machine is lighter than in the others.
        ...(ingestRanDry ? { ingestRanDry } : {}),
        ...(floor ? { floor, refusalP99VsFloor: floor.refusalP99Ms ? round(summary.refusalP99Ms / floor.refusalP99Ms, 2) : null } : {}),
      };
      runs.push(figures);
      if (!figures.generatorKeptUp)
        console.log(
          `  the load generator fell behind (event loop delay p99 ${figures.generatorEventLoopLagP99Ms} ms): its callers missed ` +
            'deadlines and reset streams on their own; these figures measure it, not the service',
        );
      console.log(
        `  ${summary.answered} answered (${figures.answeredPerSecond}/s, ${figures.answeredVsSustainable} of sustainable), ` +
          `${summary.refused} refused (p50 ${figures.refusalP50Ms} ms, p99 ${figures.refusalP99Ms} ms as the callers saw it, ` +
          `p50 ${figures.refusalFromSentP50Ms} ms, p99 ${figures.refusalFromSentP99Ms} ms from when they were sent; ` +
          `server side p50 <= ${serverRefusalP50Ms} ms, p99 <= ${serverRefusalP99Ms} ms; pushback p50 ${figures.pushbackP50Ms} ms; ${JSON.stringify(refusalReasons)}), ` +
          `${summary.deadlines} deadlines (${round(summary.deadlineShare * 100)}%), other ${JSON.stringify(summary.otherCodes)}`,
      );
      console.log(
        `  recording ${figures.recordingPerSecond} events/s (${figures.recordingVsAlone} of alone); health ${JSON.stringify(probes)}; ` +
          `RSS ${rssBefore} MiB before, ${rssPeak} peak, ${figures.rssAfterMiB} ${afterSeconds} s after ` +
          `(heap used/total, external: ${JSON.stringify(memoryBefore)} before, ${JSON.stringify(memoryAfter)} after); ` +
          `gRPC process ${figures.serviceCpuMsPerCall} ms CPU a call (${figures.serviceCpuSeconds} s over ${figures.wallSeconds} s; ` +
          `the load generator ${figures.generatorCpuSeconds} s, ${figures.generatorCpuMsPerCall} ms a call; the machine's CPUs ${figures.machineBusyShare} busy); event loop delay p99: service ${serviceLagP99Ms} ms, ` +
          `load generator ${figures.generatorEventLoopLagP99Ms} ms; ` +
          `light load p99 after: ${figures.lightLoadP99MsAfter} ms; process ${alive() ? 'alive' : 'GONE'}`,
      );
      console.log(`  CPU seconds by process in the flood: ${JSON.stringify(figures.cpuSecondsByProcess)}`);
      if (floor)
        console.log(
          `  the floor, flooded the same: ${floor.answeredPerSecond}/s answered, ${floor.refused} refused (p50 ${floor.refusalP50Ms} ms, ` +
            `p99 ${floor.refusalP99Ms} ms as the callers saw it, p99 ${floor.refusalFromSentP99Ms} ms from when they were sent), ` +
            `${floor.deadlines} deadlines, other ${JSON.stringify(floor.otherFailures)}; ${floor.cpuMsPerCall} ms CPU a call ` +
            `(${floor.cpuSeconds} s over ${floor.wallSeconds} s; the load generator ${floor.generatorCpuSeconds} s; the machine's CPUs ` +
            `${floor.machineBusyShare} busy); load generator event loop delay p99 ${floor.generatorEventLoopLagP99Ms} ms; ` +
            `the service's refusal p99 ${figures.refusalP99VsFloor} times the floor's; ` +
            `CPU seconds by process: ${JSON.stringify(floor.cpuSecondsByProcess)}`,
        );
    }
    for (const ended of processes.filter((p) => !p.alive()))
      console.log(`a service process ended (${ended.child.exitCode ?? ended.child.signalCode}):\n${ended.output.slice(-4_000)}`);
    console.log(
      JSON.stringify({
        recordingAlonePerSecond: Math.round(recordingAlone),
        recordingAloneCpuSecondsByProcess: recordingAloneCpu,
        generator: generatorKind === 'go' ? 'go' : `node (${client}, ${threads} threads)`,
        serviceSession: ownSession ? 'own' : 'shared',
        roles: splitRoles ? 'split' : 'one process',
        ...(windowKib !== undefined ? { callerWindowKib: windowKib } : {}),
        ...(pinning ? { cpus: pinning } : {}),
        floods: runs,
      }),
    );
  } finally {
    ingesting = false;
    await ingest;
    await generator.close();
    health.close();
    await teardownBench({
      children: processes.map((p) => p.child),
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
