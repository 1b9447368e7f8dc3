import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import { readFileSync } from 'node:fs';
import * as http2 from 'node:http2';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { DEFAULT_CHANNEL_OPTIONS } from '../../libs/client/src/tool-history-client';
import { TENANT_METADATA_KEY } from '../../libs/contract/src/request-metadata';
import { findProjectFile } from '../../apps/toolhistory/src/find-project-file';

/**
 * Floods of turn-start replays for the overload test and benchmark: raw
 * callers on loopback that keep each answer as bytes (decoding big
 * responses would make the load generator the bottleneck) and classify each
 * call's outcome, in an open loop (requests go out at the offered rate
 * whatever the answers).
 */

const PROTO = findProjectFile('proto/toolhistory/v1/toolhistory.proto', __dirname);

export type Outcome = 'answered' | 'refused' | 'deadline' | 'other';

export interface CallResult {
  outcome: Outcome;
  /** The status code's name (OK for an answer). */
  code: string;
  /** From when the call was due to its end. */
  ms: number;
  /** From when the call was due to when the load generator sent it (its own lateness; 0 in a closed loop). */
  sentLateMs?: number;
  /** The refusal's grpc-retry-pushback-ms, when it had one. */
  pushbackMs?: number;
}

/** A GetReplayHistory request as the wire takes it (field names as in the proto). */
export type ReplayRequest = { tenant_id: string; conversation_id: string } & Record<string, unknown>;

export interface ReplayCallers {
  /** One GetReplayHistory on caller `i % callers`, with the given deadline. */
  call(i: number, request: ReplayRequest, deadlineMs: number): Promise<Omit<CallResult, 'ms'>>;
  /** The same, with a handle to cancel it (the client resets the stream, as a caller that gives up does). */
  start(i: number, request: ReplayRequest, deadlineMs: number): { outcome: Promise<Omit<CallResult, 'ms'>>; cancel(): void };
  close(): void;
}

const STATUS_NAMES = new Map<number, string>(Object.entries(grpc.status).map(([name, code]) => [code as number, name]));

/** GetReplayHistory as the proto defines it: its path and request serializer, with field names as in the proto. */
export function replayMethod(): grpc.MethodDefinition<unknown, unknown> {
  const definition = protoLoader.loadSync(PROTO, { keepCase: true, longs: String, enums: String, defaults: true, oneofs: true });
  return (definition['toolhistory.v1.ToolHistory'] as grpc.ServiceDefinition)['GetReplayHistory'];
}

/** A GetReplayHistory request as gRPC frames it on the wire: uncompressed, its length, then the message. */
export function replayRequestFrame(request: ReplayRequest, method = replayMethod()): Buffer {
  const message = method.requestSerialize(request);
  const frame = Buffer.alloc(5 + message.length);
  frame.writeUInt32BE(message.length, 1);
  message.copy(frame, 5);
  return frame;
}

/** `count` channels to 127.0.0.1:`port`, each its own HTTP/2 connection, with the client package's channel options. */
export function replayCallers(port: number, count = 8): ReplayCallers {
  const method = replayMethod();
  const RawClient = grpc.makeGenericClientConstructor(
    { GetReplayHistory: { ...method, responseDeserialize: (bytes: Buffer) => bytes } },
    'ToolHistory',
  );
  // A distinct option per channel keeps grpc-js from sharing one connection between them.
  const clients = Array.from(
    { length: count },
    (_, i) =>
      new RawClient(`127.0.0.1:${port}`, grpc.credentials.createInsecure(), {
        ...DEFAULT_CHANNEL_OPTIONS,
        'grpc.primary_user_agent': `flood-${i}`,
      }) as unknown as grpc.Client & { GetReplayHistory: (...args: unknown[]) => grpc.ClientUnaryCall },
  );
  const start: ReplayCallers['start'] = (i, request, deadlineMs) => {
    let call: grpc.ClientUnaryCall | undefined;
    const outcome = new Promise<Omit<CallResult, 'ms'>>((done) => {
      call = clients[i % clients.length].GetReplayHistory(
        request,
        { deadline: new Date(Date.now() + deadlineMs) },
        (error: grpc.ServiceError | null) => {
          if (!error) return done({ outcome: 'answered', code: 'OK' });
          const code = STATUS_NAMES.get(error.code) ?? String(error.code);
          if (error.code === grpc.status.RESOURCE_EXHAUSTED) {
            const pushback = Number(error.metadata?.get('grpc-retry-pushback-ms')[0]);
            return done({ outcome: 'refused', code, pushbackMs: Number.isFinite(pushback) ? pushback : undefined });
          }
          done({ outcome: error.code === grpc.status.DEADLINE_EXCEEDED ? 'deadline' : 'other', code });
        },
      );
    });
    return { outcome, cancel: () => call?.cancel() };
  };
  return {
    call: (i, request, deadlineMs) => start(i, request, deadlineMs).outcome,
    start,
    close: () => clients.forEach((c) => c.close()),
  };
}

/** Which client sends a flood's calls: grpc-js (as the client package calls), or bare HTTP/2 (a lighter generator). */
export type FloodClient = 'grpc-js' | 'http2';

/**
 * `count` bare HTTP/2 connections to 127.0.0.1:`port` speaking gRPC's wire
 * format (a length-prefixed request, `grpc-timeout`, the tenant header the
 * client package sends, the status in the trailers), which never decode the
 * answer. A grpc-js client spends about
 * 0.2 ms of CPU a call; on a machine the load generator shares with the
 * service, that is CPU the service does not get and event loop delay that
 * shows as its latency. Outcomes as `replayCallers` classifies them: a
 * caller whose deadline passes resets the stream (`CANCEL`), as grpc-js does.
 */
export function http2ReplayCallers(
  port: number,
  count = 8,
  window = DEFAULT_CHANNEL_OPTIONS['grpc-node.flow_control_window'] as number,
): ReplayCallers {
  const method = replayMethod();
  const connect = () => {
    const session = http2.connect(`http://127.0.0.1:${port}`, { settings: { initialWindowSize: window } });
    session.once('connect', () => session.setLocalWindowSize(window));
    // A session that fails or goes away is opened again on the next call; its calls end 'other' on their own.
    session.on('error', () => undefined);
    return session;
  };
  const sessions: http2.ClientHttp2Session[] = Array.from({ length: count }, connect);
  const sessionFor = (i: number) => {
    const k = i % sessions.length;
    if (sessions[k].closed || sessions[k].destroyed) sessions[k] = connect();
    return sessions[k];
  };
  const framed = new WeakMap<ReplayRequest, Buffer>();
  const frameOf = (request: ReplayRequest) => {
    let frame = framed.get(request);
    if (!frame) framed.set(request, (frame = replayRequestFrame(request, method)));
    return frame;
  };
  const start: ReplayCallers['start'] = (i, request, deadlineMs) => {
    let stream: http2.ClientHttp2Stream | undefined;
    let ended: Omit<CallResult, 'ms'> | undefined;
    const outcome = new Promise<Omit<CallResult, 'ms'>>((done) => {
      const end = (result: Omit<CallResult, 'ms'>) => {
        if (ended) return;
        ended = result;
        clearTimeout(timer);
        done(result);
      };
      const timer = setTimeout(() => {
        end({ outcome: 'deadline', code: 'DEADLINE_EXCEEDED' });
        stream?.close(http2.constants.NGHTTP2_CANCEL);
      }, deadlineMs);
      let bytes = 0;
      const settle = (headers: http2.IncomingHttpHeaders) => {
        const code = Number(headers['grpc-status']);
        if (!Number.isInteger(code)) return end({ outcome: 'other', code: `HTTP ${headers[':status'] ?? 'no status'}` });
        if (code === grpc.status.OK)
          return end(bytes > 5 ? { outcome: 'answered', code: 'OK' } : { outcome: 'other', code: 'EMPTY_ANSWER' });
        const name = STATUS_NAMES.get(code) ?? String(code);
        if (code === grpc.status.RESOURCE_EXHAUSTED) {
          const pushback = Number(headers['grpc-retry-pushback-ms']);
          return end({ outcome: 'refused', code: name, pushbackMs: Number.isFinite(pushback) ? pushback : undefined });
        }
        end({ outcome: code === grpc.status.DEADLINE_EXCEEDED ? 'deadline' : 'other', code: name });
      };
      try {
        stream = sessionFor(i).request({
          ':method': 'POST',
          ':path': method.path,
          'content-type': 'application/grpc',
          te: 'trailers',
          'grpc-timeout': `${deadlineMs}m`,
          // As the client package sends it: a call the service would refuse at once is refused from its headers.
          ...(request.tenant_id ? { [TENANT_METADATA_KEY]: request.tenant_id } : {}),
        });
      } catch {
        return end({ outcome: 'other', code: 'UNAVAILABLE' });
      }
      // A trailers-only answer (a refusal) carries its status in the response's headers.
      stream.on('response', (headers) => {
        if (headers['grpc-status'] !== undefined) settle(headers);
      });
      stream.on('data', (chunk: Buffer) => (bytes += chunk.length));
      stream.on('trailers', settle);
      stream.on('error', () => end({ outcome: 'other', code: 'INTERNAL' }));
      stream.on('close', () => end({ outcome: 'other', code: stream?.rstCode ? `RST ${stream.rstCode}` : 'UNAVAILABLE' }));
      stream.end(frameOf(request));
    });
    return { outcome, cancel: () => stream?.close(http2.constants.NGHTTP2_CANCEL) };
  };
  return {
    call: (i, request, deadlineMs) => start(i, request, deadlineMs).outcome,
    start,
    close: () => sessions.forEach((s) => s.close()),
  };
}

/**
 * One GetReplayHistory answer's bytes as they came on the wire (the framed
 * message, as the service wrote it), over a bare HTTP/2 connection: what a
 * stand-in server sends to be measured beside the service.
 */
export async function replayAnswerBytes(port: number, request: ReplayRequest): Promise<Buffer> {
  const method = replayMethod();
  const session = http2.connect(`http://127.0.0.1:${port}`);
  try {
    return await new Promise<Buffer>((done, fail) => {
      session.once('error', fail);
      const stream = session.request({
        ':method': 'POST',
        ':path': method.path,
        'content-type': 'application/grpc',
        te: 'trailers',
        [TENANT_METADATA_KEY]: request.tenant_id,
      });
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.once('error', fail);
      const settle = (headers: http2.IncomingHttpHeaders) => {
        const code = headers['grpc-status'];
        if (code === undefined) return;
        if (code === String(grpc.status.OK) && chunks.length > 0) done(Buffer.concat(chunks));
        else fail(new Error(`GetReplayHistory ended ${code} (${String(headers['grpc-message'] ?? '')}), no answer to copy`));
      };
      stream.on('response', settle);
      stream.on('trailers', settle);
      stream.end(replayRequestFrame(request, method));
    });
  } finally {
    session.close();
  }
}

/** A flood's callers, from the client asked for. */
export const floodCallers = (client: FloodClient, port: number, count: number, windowBytes?: number): ReplayCallers =>
  client === 'http2' ? http2ReplayCallers(port, count, windowBytes) : replayCallers(port, count);

/**
 * Sends `rate` calls a second for `seconds` (open loop: request i is due at
 * i / rate s and sent then, whatever came back), each timed from when it
 * was due. `oneCall` gets the request's index.
 */
export async function openLoop(
  rate: number,
  seconds: number,
  oneCall: (i: number) => Promise<Omit<CallResult, 'ms'>>,
): Promise<CallResult[]> {
  const total = Math.floor(rate * seconds);
  const results: Promise<CallResult>[] = [];
  const started = performance.now();
  for (let sent = 0; sent < total;) {
    const due = Math.min(total, Math.floor(((performance.now() - started) / 1000) * rate) + 1);
    for (; sent < due; sent += 1) {
      const dueAt = started + (sent / rate) * 1000;
      const sentLateMs = performance.now() - dueAt;
      results.push(oneCall(sent).then((r) => ({ ...r, ms: performance.now() - dueAt, sentLateMs })));
    }
    await new Promise((r) => setTimeout(r, 1));
  }
  return Promise.all(results);
}

/** One load of replays: an open loop of `rate` calls a second, or a closed loop of `callers` callers, for `seconds`. */
export interface FloodLoad {
  /** open: `rate` calls a second whatever comes back; closed: `callers` callers, each calling again when answered. */
  loop: 'open' | 'closed';
  port: number;
  /** Connections (and, in a closed loop, callers: one on each). */
  callers: number;
  rate: number;
  seconds: number;
  request: ReplayRequest;
  deadlineMs: number;
  /** The callers' flow-control window for answers (the client package's when not given; grpc-js callers keep their own). */
  windowBytes?: number;
}

/**
 * An open loop (`rate` calls a second) or a closed loop (`callers` callers)
 * split over `threads` worker threads, each with its own callers and a
 * share of the load, so the load generator's own event loop lags less
 * behind what it sends and receives (a lag that would show as the
 * service's latency). Needs the compiled worker (dist/), as benchmarks run;
 * tests use `openLoop`.
 */
export async function loadInWorkers(
  threads: number,
  share: FloodLoad & {
    /** grpc-js when not given. */
    client?: FloodClient;
  },
): Promise<{ results: CallResult[]; generatorLagP99Ms: number }> {
  const outcomes: Outcome[] = ['answered', 'refused', 'deadline', 'other'];
  let generatorLagP99Ms = 0;
  const parts = await Promise.all(
    Array.from(
      { length: threads },
      () =>
        new Promise<CallResult[]>((done, fail) => {
          const worker = new Worker(join(__dirname, 'flood-worker.js'), {
            workerData: { ...share, rate: share.rate / threads, callers: Math.max(1, Math.round(share.callers / threads)) },
          });
          worker.once('error', fail);
          type Columns = {
            ms: Float64Array;
            sentLateMs: Float64Array;
            outcome: Uint8Array;
            pushbackMs: Float64Array;
            codes: string[];
            lagP99Ms: number;
          };
          worker.once('message', (columns: Columns) => {
            generatorLagP99Ms = Math.max(generatorLagP99Ms, columns.lagP99Ms);
            done(
              Array.from(columns.ms, (ms, i) => ({
                ms,
                sentLateMs: columns.sentLateMs[i],
                outcome: outcomes[columns.outcome[i]],
                code: columns.codes[i],
                ...(columns.pushbackMs[i] >= 0 ? { pushbackMs: columns.pushbackMs[i] } : {}),
              })),
            );
            void worker.terminate();
          });
        }),
    ),
  );
  return { results: parts.flat(), generatorLagP99Ms };
}

/**
 * Closed loop: `callers` callers each call again as soon as answered, for
 * `seconds`; what the service sustains with a latency a turn can afford.
 */
export async function closedLoop(
  callers: number,
  seconds: number,
  oneCall: (i: number) => Promise<Omit<CallResult, 'ms'>>,
): Promise<{ results: CallResult[]; elapsedSeconds: number }> {
  const results: CallResult[] = [];
  const started = performance.now();
  const until = started + seconds * 1000;
  await Promise.all(
    Array.from({ length: callers }, async (_, i) => {
      while (performance.now() < until) {
        const t = performance.now();
        results.push({ ...(await oneCall(i)), ms: performance.now() - t });
      }
    }),
  );
  return { results, elapsedSeconds: (performance.now() - started) / 1000 };
}

export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))];
}

export interface FloodSummary {
  requests: number;
  answered: number;
  refused: number;
  deadlines: number;
  other: number;
  /** Other outcomes by status name. */
  otherCodes: Record<string, number>;
  deadlineShare: number;
  refusalP50Ms: number;
  refusalP99Ms: number;
  /** Refusals timed from when the load generator sent them (its own lateness left out). */
  refusalFromSentP50Ms: number;
  refusalFromSentP99Ms: number;
  answeredP50Ms: number;
  answeredP99Ms: number;
  /** Refusals that carried grpc-retry-pushback-ms. */
  refusalsWithPushback: number;
  pushbackP50Ms: number;
}

export function summarize(results: readonly CallResult[]): FloodSummary {
  const of = (outcome: Outcome) => results.filter((r) => r.outcome === outcome);
  const refused = of('refused');
  const answered = of('answered');
  const other = of('other');
  const otherCodes: Record<string, number> = {};
  for (const r of other) otherCodes[r.code] = (otherCodes[r.code] ?? 0) + 1;
  const pushbacks = refused.flatMap((r) => (r.pushbackMs === undefined ? [] : [r.pushbackMs]));
  return {
    requests: results.length,
    answered: answered.length,
    refused: refused.length,
    deadlines: of('deadline').length,
    other: other.length,
    otherCodes,
    deadlineShare: results.length === 0 ? 0 : of('deadline').length / results.length,
    refusalP50Ms: percentile(
      refused.map((r) => r.ms),
      50,
    ),
    refusalP99Ms: percentile(
      refused.map((r) => r.ms),
      99,
    ),
    refusalFromSentP50Ms: percentile(
      refused.map((r) => r.ms - (r.sentLateMs ?? 0)),
      50,
    ),
    refusalFromSentP99Ms: percentile(
      refused.map((r) => r.ms - (r.sentLateMs ?? 0)),
      99,
    ),
    answeredP50Ms: percentile(
      answered.map((r) => r.ms),
      50,
    ),
    answeredP99Ms: percentile(
      answered.map((r) => r.ms),
      99,
    ),
    refusalsWithPushback: pushbacks.length,
    pushbackP50Ms: percentile(pushbacks, 50),
  };
}

/** The sum of a counter's samples in a Prometheus exposition (every label set with the given `labels`), or 0. */
export function counterTotal(exposition: string, name: string, labels: Record<string, string> = {}): number {
  const wanted = Object.entries(labels).map(([label, value]) => `${label}="${value}"`);
  let total = 0;
  for (const line of exposition.split('\n')) {
    if (!line.startsWith(name)) continue;
    const rest = line.slice(name.length);
    if (rest[0] !== ' ' && rest[0] !== '{') continue;
    if (!wanted.every((pair) => rest.includes(pair))) continue;
    total += Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return total;
}

/** Resident set size of a process now, from /proc (Linux), in MiB. */
export function rssMiB(pid: number): number | null {
  return procStatusMiB(pid, 'VmRSS');
}

/** Peak resident set size of a process since it started, from /proc (Linux), in MiB. */
export function peakRssMiBOf(pid: number): number | null {
  return procStatusMiB(pid, 'VmHWM');
}

function procStatusMiB(pid: number, field: string): number | null {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const match = new RegExp(`${field}:\\s+(\\d+) kB`).exec(status);
    return match ? Math.round(Number(match[1]) / 1024) : null;
  } catch {
    return null;
  }
}

/** Cumulative counts of a histogram's buckets (`le` -> count) for the samples whose labels include all of `labels`. */
export function histogramBuckets(exposition: string, name: string, labels: Record<string, string>): Map<number, number> {
  const buckets = new Map<number, number>();
  const wanted = Object.entries(labels).map(([k, v]) => `${k}="${v}"`);
  for (const line of exposition.split('\n')) {
    if (!line.startsWith(`${name}_bucket{`) || !wanted.every((w) => line.includes(w))) continue;
    const le = /le="([^"]+)"/.exec(line)?.[1];
    if (le === undefined) continue;
    const bound = le === '+Inf' ? Infinity : Number(le);
    buckets.set(bound, (buckets.get(bound) ?? 0) + Number(line.slice(line.lastIndexOf(' ') + 1)));
  }
  return buckets;
}

/**
 * The upper bound of the bucket that holds the p-th percentile of what was
 * observed between two scrapes (`before` subtracted from `after`), in ms.
 */
export function histogramPercentileMs(before: Map<number, number>, after: Map<number, number>, p: number): number | null {
  const bounds = [...after.keys()].sort((a, b) => a - b);
  const total = (after.get(Infinity) ?? 0) - (before.get(Infinity) ?? 0);
  if (total <= 0) return null;
  for (const bound of bounds) {
    if ((after.get(bound) ?? 0) - (before.get(bound) ?? 0) >= (p / 100) * total) return bound * 1000;
  }
  return null;
}
