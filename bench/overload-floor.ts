/**
 * The floor beside a flood of `npm run bench:overload -- --floor`: a bare
 * Node HTTP/2 server, in a process of its own, that does the least any
 * server must do for the same traffic. It answers with the service's own
 * answer bytes at the rate the service answered (a token bucket) and refuses
 * every other call at once, trailers-only, as the service's stream gate
 * does: no grpc-js, no decoding, no cache, no database, nothing recorded.
 *
 * Flooded by the same generator at the same rate right after the service's
 * flood, it tells what the machine, the generator and Node's HTTP/2 give a
 * refusal in that hour; the service's time to refusal beside it tells what
 * the service adds (docs/benchmarks.md, "The floor beside each flood").
 */
import { fork, type ChildProcess } from 'node:child_process';
import * as http2 from 'node:http2';
import { CONFIG_DEFAULTS } from '../libs/config/src';

export interface FloorSettings {
  /** One answer's bytes as the service wrote them (the framed message). */
  answer: Buffer;
  /** Answers a second; every other call is refused. */
  answeredPerSecond: number;
  /** Answers the bucket may hold: as many as the service's replay lane admits at once. */
  burst: number;
}

export interface FloorServer {
  port: number;
  pid: number;
  stop(): Promise<void>;
}

/** The HTTP/2 limits the service's gRPC server has by default (docs/adr/031-http2-limits-under-a-flood.md). */
const SERVICE_HTTP2_LIMITS: http2.ServerOptions = {
  maxSessionMemory: Number(CONFIG_DEFAULTS.GRPC_MAX_SESSION_MEMORY_MB),
  settings: { maxConcurrentStreams: Number(CONFIG_DEFAULTS.GRPC_MAX_CONCURRENT_STREAMS) },
};

/** As the service's gate refuses: RESOURCE_EXHAUSTED with a reason and a pushback, in the response's headers. */
const REFUSAL: http2.OutgoingHttpHeaders = {
  ':status': 200,
  'content-type': 'application/grpc+proto',
  'grpc-status': '8',
  'grpc-message': encodeURI('the replay lane is full; retry after the pushback'),
  'grpc-retry-pushback-ms': '100',
};
const ANSWER_HEADERS: http2.OutgoingHttpHeaders = { ':status': 200, 'content-type': 'application/grpc+proto' };
const ANSWER_TRAILERS: http2.OutgoingHttpHeaders = { 'grpc-status': '0', 'grpc-message': '' };

/** Answers while the bucket holds one, refuses otherwise; the bucket fills at `answeredPerSecond`. */
function answerOrRefuse(settings: Pick<FloorSettings, 'answeredPerSecond' | 'burst'>, now: () => number = () => performance.now()) {
  let tokens = settings.burst;
  let filledAt = now();
  return (): boolean => {
    const at = now();
    tokens = Math.min(settings.burst, tokens + ((at - filledAt) / 1000) * settings.answeredPerSecond);
    filledAt = at;
    if (tokens < 1) return false;
    tokens -= 1;
    return true;
  };
}

/** In the floor's own process: serves on loopback, says its port. */
async function serve(settings: FloorSettings): Promise<void> {
  const answer = Buffer.from(settings.answer);
  const admit = answerOrRefuse(settings);
  const server = http2.createServer(SERVICE_HTTP2_LIMITS);
  server.on('stream', (stream) => {
    stream.on('error', () => undefined);
    // The request is read, not decoded.
    stream.resume();
    if (!admit()) return stream.respond(REFUSAL, { endStream: true });
    stream.respond(ANSWER_HEADERS, { waitForTrailers: true });
    stream.once('wantTrailers', () => stream.sendTrailers(ANSWER_TRAILERS));
    stream.end(answer);
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  process.send!({ port: (server.address() as { port: number }).port });
}

/** Starts the floor in a process of its own (this file, forked) and waits for its port. */
export async function startFloorServer(settings: FloorSettings): Promise<FloorServer> {
  const child: ChildProcess = fork(__filename, ['--floor-server'], { serialization: 'advanced', stdio: 'inherit' });
  const port = await new Promise<number>((done, fail) => {
    child.once('error', fail);
    child.once('exit', (code, signal) => fail(new Error(`the floor server ended before serving (${code ?? signal})`)));
    child.once('message', (message: { port: number }) => done(message.port));
    child.send(settings);
  });
  child.removeAllListeners('exit');
  return {
    port,
    pid: child.pid!,
    stop: () =>
      new Promise<void>((done) => {
        if (child.exitCode !== null || child.signalCode !== null) return done();
        child.once('exit', () => done());
        child.kill('SIGTERM');
      }),
  };
}

if (process.argv.includes('--floor-server'))
  process.once('message', (settings: FloorSettings) =>
    serve(settings).catch((error: unknown) => {
      console.error(error);
      process.exit(1);
    }),
  );
