/**
 * Idle benchmark: the CPU a service with every role (recorder and gRPC, as
 * `npm start` runs it) spends with nothing to do: connected to the broker
 * and the database, no event published, no call made. What a fleet of
 * quiet instances costs, and what a timer loop or a busy poll would show
 * (docs/adr/037-kafkajs-idle-timer-patch.md).
 *
 *   npm run bench:idle -- [--settle-seconds 10] [--seconds 30] [--samples 3] [--keep]
 *
 * After start-up and --settle-seconds, --samples windows of --seconds each:
 * the service's CPU (user and system, from /proc) in each. BENCH_SERVICE_ENV
 * (JSON) overrides its settings. The last line printed is one JSON object.
 */
import { freePort } from '../test/support/grpc-client';
import {
  benchKafka,
  cpuSeconds,
  createBenchTopics,
  intOption,
  parseArgs,
  runInBenchSchema,
  sleep,
  spawnBenchRecorder,
  stopChild,
} from './bench-support';

const BROKERS = (process.env.BENCH_KAFKA_BROKERS ?? '127.0.0.1:9092').split(',');

function main(): void {
  const { values } = parseArgs({
    options: { 'settle-seconds': { type: 'string' }, seconds: { type: 'string' }, samples: { type: 'string' }, keep: { type: 'boolean' } },
  });
  const settleSeconds = intOption(values, 'settle-seconds', 10, { zero: true });
  const seconds = intOption(values, 'seconds', 30);
  const samples = intOption(values, 'samples', 3);
  runInBenchSchema('bench_idle', values.keep === true, async ({ schema, databaseUrl }) => {
    const topic = `bench-idle-${Date.now().toString(36)}`;
    const admin = benchKafka(BROKERS).admin();
    await admin.connect();
    let service: ReturnType<typeof spawnBenchRecorder> | undefined;
    try {
      await createBenchTopics(admin, topic, 6);
      service = spawnBenchRecorder({
        brokers: BROKERS,
        topic,
        groupId: topic,
        databaseUrl,
        schema,
        env: { SERVICE_ROLES: 'recorder,grpc', GRPC_PORT: String(await freePort()) },
      });
      await service.seen('toolhistory started');
      await sleep(settleSeconds * 1000);
      const pid = service.child.pid!;
      const windows: number[] = [];
      for (let n = 1; n <= samples; n += 1) {
        const before = cpuSeconds(pid);
        const started = performance.now();
        await sleep(seconds * 1000);
        const msPerSecond = ((cpuSeconds(pid) - before) * 1000) / ((performance.now() - started) / 1000);
        windows.push(Math.round(msPerSecond * 10) / 10);
        console.log(
          `window ${n}/${samples}: ${windows.at(-1)} ms of CPU a second (${(msPerSecond / 10).toFixed(2)} % of a core) over ${seconds} s`,
        );
      }
      console.log(JSON.stringify({ bench: 'idle', roles: 'recorder,grpc', seconds, cpuMsPerSecond: windows }));
    } finally {
      await stopChild(service?.child);
      if (values.keep !== true) await admin.deleteTopics({ topics: [topic, `${topic}.dlq`] }).catch(() => undefined);
      await admin.disconnect();
    }
  });
}

main();
