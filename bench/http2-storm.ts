/**
 * HTTP/2 storm: tries to make a Node.js gRPC server abort the way one run
 * of the overload benchmark did (`Assertion failed: (current_nghttp2_memory_)
 * == (0)` in Http2Session::~Http2Session), on loopback only, against a bare
 * grpc-js server (bench/http2-storm-server.ts), so what it finds is Node's
 * or grpc-js's, not the service's (docs/adr/031-http2-limits-under-a-flood.md).
 *
 *   npm run bench:http2-storm -- [--rounds 10] [--seconds 5] [--pattern all|deadline|reset|slow-reader]
 *
 * Each round starts a fresh server and runs the patterns at once, then
 * drops every connection abruptly:
 *   deadline     grpc-js callers with 1-3 ms deadlines: the client resets
 *                nearly every stream (RST_STREAM CANCEL), which trips
 *                nghttp2's reset rate limit (GOAWAY), as a flood of missed
 *                deadlines does;
 *   reset        raw HTTP/2 sessions opening streams and resetting them at
 *                once (the rapid reset pattern);
 *   slow-reader  raw sessions that ask and never read, then vanish (the
 *                server holds answers it cannot send when the socket dies).
 * STORM_SERVER_OPTIONS (JSON) sets the server's grpc-js options (default:
 * the service's: 1000 concurrent streams, 64 MiB session memory). Prints
 * per round what the server saw and how it ended; an abort is printed with
 * the server's last output. The last line printed is one JSON object.
 */
import * as grpc from '@grpc/grpc-js';
import { spawn, type ChildProcess } from 'node:child_process';
import * as http2 from 'node:http2';
import { resolve } from 'node:path';
import { intOption, parseArgs, sleep } from './bench-support';

const PATTERNS = ['deadline', 'reset', 'slow-reader'] as const;
type Pattern = (typeof PATTERNS)[number];

/** A gRPC request frame: no compression, an empty message. */
const EMPTY_MESSAGE = Buffer.from([0, 0, 0, 0, 0]);
const REQUEST_HEADERS = {
  ':method': 'POST',
  ':path': '/storm.Storm/Replay',
  'content-type': 'application/grpc',
  te: 'trailers',
};

async function startServer(): Promise<{ child: ChildProcess; port: number; output: () => string }> {
  const child = spawn(process.execPath, [resolve(__dirname, 'http2-storm-server.js')], {
    env: {
      PATH: process.env.PATH ?? '',
      STORM_SERVER_OPTIONS:
        process.env.STORM_SERVER_OPTIONS ?? JSON.stringify({ 'grpc.max_concurrent_streams': 1000, 'grpc-node.max_session_memory': 64 }),
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const keep = (chunk: Buffer) => (output = (output + chunk.toString()).slice(-8_000));
  child.stdout!.on('data', keep);
  child.stderr!.on('data', keep);
  for (let waited = 0; ; waited += 20) {
    const port = /port (\d+)/.exec(output)?.[1];
    if (port) return { child, port: Number(port), output: () => output };
    if (waited > 10_000 || child.exitCode !== null) throw new Error(`storm server did not start:\n${output}`);
    await sleep(20);
  }
}

/** grpc-js callers whose deadlines pass before the answer: nearly every stream ends with the client's RST_STREAM. */
async function deadlineStorm(port: number, until: number): Promise<number> {
  const Client = grpc.makeGenericClientConstructor(
    {
      Replay: {
        path: '/storm.Storm/Replay',
        requestStream: false,
        responseStream: false,
        requestSerialize: (b: Buffer) => b,
        requestDeserialize: (b: Buffer) => b,
        responseSerialize: (b: Buffer) => b,
        responseDeserialize: (b: Buffer) => b,
      },
    },
    'Storm',
  );
  const clients = Array.from(
    { length: 8 },
    (_, i) =>
      new Client(`127.0.0.1:${port}`, grpc.credentials.createInsecure(), {
        'grpc.primary_user_agent': `storm-${i}`,
      }) as unknown as grpc.Client & {
        Replay: (r: Buffer, o: grpc.CallOptions, cb: () => void) => void;
      },
  );
  let sent = 0;
  while (Date.now() < until) {
    for (let i = 0; i < 40; i += 1) {
      clients[sent % clients.length].Replay(Buffer.alloc(0), { deadline: Date.now() + 1 + (sent % 3) }, () => undefined);
      sent += 1;
    }
    await sleep(2);
  }
  clients.forEach((c) => c.close());
  return sent;
}

/** Raw sessions opening streams and resetting them at once (rapid reset). */
async function resetStorm(port: number, until: number): Promise<number> {
  let sent = 0;
  const sessions = Array.from({ length: 4 }, () => http2.connect(`http://127.0.0.1:${port}`));
  for (const session of sessions) session.on('error', () => undefined);
  while (Date.now() < until) {
    for (const session of sessions) {
      if (session.destroyed || session.closed) continue;
      for (let i = 0; i < 20; i += 1) {
        try {
          const stream = session.request(REQUEST_HEADERS);
          stream.on('error', () => undefined);
          stream.end(EMPTY_MESSAGE);
          stream.close(http2.constants.NGHTTP2_CANCEL);
          sent += 1;
        } catch {
          break;
        }
      }
    }
    await sleep(1);
  }
  for (const session of sessions) session.destroy();
  return sent;
}

/** Raw sessions that ask and never read their answers, then vanish with answers queued. */
async function slowReaderStorm(port: number, until: number): Promise<number> {
  let sent = 0;
  while (Date.now() < until) {
    const session = http2.connect(`http://127.0.0.1:${port}`, { settings: { initialWindowSize: 65_535 } });
    session.on('error', () => undefined);
    for (let i = 0; i < 200; i += 1) {
      try {
        const stream = session.request(REQUEST_HEADERS);
        stream.on('error', () => undefined);
        stream.pause();
        stream.end(EMPTY_MESSAGE);
        sent += 1;
      } catch {
        break;
      }
    }
    await sleep(50);
    // The socket dies with answers the server could not send yet.
    session.socket?.destroy();
    session.destroy();
  }
  return sent;
}

const STORMS: Record<Pattern, (port: number, until: number) => Promise<number>> = {
  deadline: deadlineStorm,
  reset: resetStorm,
  'slow-reader': slowReaderStorm,
};

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { rounds: { type: 'string' }, seconds: { type: 'string' }, pattern: { type: 'string' } } });
  const rounds = intOption(values, 'rounds', 10);
  const seconds = intOption(values, 'seconds', 5);
  const pattern = values.pattern ?? 'all';
  const patterns: Pattern[] = pattern === 'all' ? [...PATTERNS] : [pattern as Pattern];
  if (!patterns.every((p) => PATTERNS.includes(p))) throw new Error(`--pattern must be all or one of ${PATTERNS.join(', ')}`);
  const outcomes: Array<{ round: number; sent: Record<string, number>; aborted: boolean; exit: string; assertion?: string }> = [];
  for (let round = 1; round <= rounds; round += 1) {
    const server = await startServer();
    const until = Date.now() + seconds * 1000;
    const counts = await Promise.all(patterns.map((p) => STORMS[p](server.port, until)));
    // Let the server see the dropped connections, and destroy their sessions.
    await sleep(1_000);
    const aliveAfterStorm = server.child.exitCode === null && server.child.signalCode === null;
    if (aliveAfterStorm) server.child.kill('SIGTERM');
    const exit = await new Promise<string>((done) => {
      if (!aliveAfterStorm) return done(String(server.child.signalCode ?? server.child.exitCode));
      server.child.once('exit', (code, signal) => done(String(signal ?? code)));
    });
    const assertion = /Assertion[^\n]*/.exec(server.output())?.[0];
    const outcome = {
      round,
      sent: Object.fromEntries(patterns.map((p, i) => [p, counts[i]])),
      aborted: !aliveAfterStorm || assertion !== undefined,
      exit,
      ...(assertion ? { assertion } : {}),
    };
    outcomes.push(outcome);
    const seen = server
      .output()
      .split('\n')
      .filter((l) => l.startsWith('answered'))
      .at(-1);
    console.log(
      `round ${round}: sent ${JSON.stringify(outcome.sent)}; server ${seen ?? ''}; ${outcome.aborted ? `ABORTED (${exit})` : `survived (exit ${exit})`}`,
    );
    if (outcome.aborted) console.log(server.output().slice(-3_000));
  }
  console.log(
    JSON.stringify({ rounds, seconds, patterns, node: process.version, aborted: outcomes.filter((o) => o.aborted).length, outcomes }),
  );
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
