import type { ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import type { Admin, Producer } from 'kafkajs';
import type { Pool } from 'pg';
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

export function intOption(values: Record<string, unknown>, name: string, fallback: number): number {
  const raw = values[name];
  if (raw === undefined) return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n <= 0) throw new Error(`--${name} must be a positive integer, got ${String(raw)}`);
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
}
