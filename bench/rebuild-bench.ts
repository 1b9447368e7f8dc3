/**
 * Rebuild benchmark: seeds the event store with --events events (default
 * 1,000,000; runs of two calls with ~1 KB results) in a fresh schema, then
 * rebuilds the read model from it as `npm run rebuild` does, and prints the
 * figures; the last line is one JSON object.
 *
 *   npm run bench:rebuild -- [--events 1000000] [--page-size 5000] [--keep]
 */
import { PostgresEventStore, PostgresReadModelRebuilder } from '../libs/persistence/src';
import { RebuildReadModel } from '../apps/toolhistory/src/rebuild/rebuild-read-model';
import { intOption, parseArgs, peakRssMiB, runInBenchSchema } from './bench-support';
import { seedEvents } from './seed-data';

function main(): void {
  const { values } = parseArgs({ options: { events: { type: 'string' }, 'page-size': { type: 'string' }, keep: { type: 'boolean' } } });
  const events = intOption(values, 'events', 1_000_000);
  const pageSize = intOption(values, 'page-size', 5_000);
  runInBenchSchema('bench_rebuild', values.keep === true, async ({ pool, schema }) => {
    console.log(`seeding ${events} events into ${schema}`);
    const seedStarted = Date.now();
    await seedEvents(pool, { events, tenants: 50 }, (done) => process.stdout.write(`  ${done}\r`));
    console.log(`  seeded in ${((Date.now() - seedStarted) / 1000).toFixed(1)} s`);
    const { rows } = await pool.query<{ bytes: string }>(`SELECT pg_total_relation_size('events')::text AS bytes`);

    const store = new PostgresEventStore(pool);
    const cpuBefore = process.cpuUsage();
    const outcome = await new RebuildReadModel(store, new PostgresReadModelRebuilder(pool, store, 'events')).execute({
      pageSize,
      onProgress: (applied) => {
        if (applied % 100_000 < pageSize) process.stdout.write(`  rebuilt ${applied}\r`);
      },
    });
    const cpu = process.cpuUsage(cpuBefore);
    const counts = await pool.query<{ conversations: number; runs: number; invocations: number }>(
      `SELECT (SELECT count(*) FROM conversations)::int AS conversations, (SELECT count(*) FROM runs)::int AS runs,
              (SELECT count(*) FROM invocations)::int AS invocations`,
    );
    const seconds = outcome.durationMs / 1000;
    const figures = {
      bench: 'rebuild',
      events: outcome.events,
      eventsMiB: Math.round(Number(rows[0].bytes) / 1024 / 1024),
      pageSize,
      seconds: Number(seconds.toFixed(1)),
      eventsPerSecond: Math.round(outcome.events / seconds),
      swapMs: outcome.swapMs,
      rows: counts.rows[0],
      rebuildProcessCpuSeconds: Number(((cpu.user + cpu.system) / 1e6).toFixed(1)),
      rebuildProcessPeakRssMiB: peakRssMiB(process.pid),
    };
    console.log(
      `rebuilt ${figures.events} events in ${figures.seconds} s: ${figures.eventsPerSecond} events/s; swap held the live tables ${figures.swapMs} ms`,
    );
    console.log(
      `rows: ${JSON.stringify(figures.rows)}; rebuild process CPU ${figures.rebuildProcessCpuSeconds} s, peak RSS ${figures.rebuildProcessPeakRssMiB} MiB`,
    );
    console.log(JSON.stringify(figures));
  });
}

main();
