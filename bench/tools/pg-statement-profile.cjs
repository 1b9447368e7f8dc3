/**
 * Where a process's PostgreSQL time goes, statement by statement, without
 * pg_stat_statements (which needs a server restart): preload it into the
 * service a benchmark starts,
 *
 *   BENCH_NODE_ARGS="--require ./bench/tools/pg-statement-profile.cjs" npm run bench:ingest -- --catch-up
 *
 * and it writes to profiles/pg-statement-profile-<pid>.json (or where the
 * service's PG_STATEMENT_PROFILE says, e.g. through BENCH_SERVICE_ENV),
 * every 2 s and at exit, the statements (first 80
 * characters, whitespace folded) with their count and total and mean time
 * from send to answer, biggest total first. Time waiting for a lock
 * counts: it is time the statement held its connection. Beside it, the
 * CPU its PostgreSQL backend spent meanwhile (`cpuMs`, from
 * /proc/<backend>/schedstat when the database runs on this machine): a
 * backend runs one statement at a time, so that is the statement's own.
 */
const { mkdirSync, readFileSync, writeFileSync } = require('node:fs');
const { dirname } = require('node:path');
const { Client } = require('pg');

const out = process.env.PG_STATEMENT_PROFILE ?? `profiles/pg-statement-profile-${process.pid}.json`;
const totals = new Map();

/** Nanoseconds a backend has run on a CPU so far; NaN when it cannot be read (another machine). */
function backendCpuNs(pid) {
  try {
    return Number(readFileSync(`/proc/${pid}/schedstat`, 'utf8').split(' ')[0]);
  } catch {
    return NaN;
  }
}

const original = Client.prototype.query;
Client.prototype.query = function profiledQuery(config, values, callback) {
  const text = typeof config === 'string' ? config : config && config.text;
  if (typeof text !== 'string') return original.call(this, config, values, callback);
  const backend = this.processID;
  const cpuBefore = backend ? backendCpuNs(backend) : NaN;
  const started = process.hrtime.bigint();
  const key = text.replace(/\s+/g, ' ').trim().slice(0, 80);
  const done = () => {
    const entry = totals.get(key) ?? { statement: key, count: 0, totalMs: 0, cpuMs: 0 };
    entry.count += 1;
    entry.totalMs += Number(process.hrtime.bigint() - started) / 1e6;
    const cpu = backend ? (backendCpuNs(backend) - cpuBefore) / 1e6 : NaN;
    if (Number.isFinite(cpu)) entry.cpuMs += cpu;
    totals.set(key, entry);
  };
  // pg-pool's query passes a callback (as the second or third argument): time it there.
  if (typeof values === 'function' || typeof callback === 'function') {
    const cb = typeof values === 'function' ? values : callback;
    const wrapped = (...args) => (done(), cb(...args));
    return typeof values === 'function' ? original.call(this, config, wrapped) : original.call(this, config, values, wrapped);
  }
  const result = original.call(this, config, values, callback);
  if (result && typeof result.then === 'function') result.then(done, done);
  return result;
};

function write() {
  const rows = [...totals.values()]
    .sort((a, b) => b.totalMs - a.totalMs)
    .map((e) => ({
      ...e,
      totalMs: Math.round(e.totalMs),
      meanMs: Math.round((e.totalMs / e.count) * 100) / 100,
      cpuMs: Math.round(e.cpuMs),
    }));
  if (rows.length === 0) return;
  mkdirSync(dirname(out), { recursive: true });
  writeFileSync(out, JSON.stringify(rows, null, 1));
}
setInterval(write, 2_000).unref();
process.on('exit', write);
