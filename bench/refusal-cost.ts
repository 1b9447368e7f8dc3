/**
 * What one busy refusal costs the serving process, by where it is made
 * (docs/adr/030-admission-control.md, "Refusing at the stream"):
 *
 *   stream       the service's gate: refused from the HTTP/2 headers, before
 *                grpc-js makes a call (the caller sends toolhistory-tenant);
 *   interceptor  the service's admission interceptor: grpc-js makes the call,
 *                the request is read and decoded, then refused;
 *   raw          a bare Node HTTP/2 server answering every stream trailers-only:
 *                the floor, no grpc-js at all.
 *
 *   npm run bench:refusal-cost -- [--calls 60000] [--in-flight 64]
 *
 * Each server runs in a process of its own on loopback, its replay lane held
 * full (one slot, taken for good; no queue), with the service's metrics and
 * interceptors (call metrics, then admission), and counts its own CPU over the
 * calls after the first thousand; this process sends the calls over four
 * HTTP/2 connections. Prints µs of CPU per refusal for each; the last line
 * is one JSON object.
 */
import { Server, ServerCredentials, type ServiceDefinition } from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import { fork } from 'node:child_process';
import * as http2 from 'node:http2';
import { TENANT_METADATA_KEY } from '../libs/contract/src/request-metadata';
import { ReadAdmission } from '../apps/toolhistory/src/admission/read-admission';
import { admissionInterceptor } from '../apps/toolhistory/src/grpc/admission-interceptor';
import { grpcCallMetrics } from '../apps/toolhistory/src/grpc/grpc-call-metrics';
import { ServiceMetrics } from '../apps/toolhistory/src/observability/service-metrics';
import { refuseAtTheStream } from '../apps/toolhistory/src/grpc/stream-admission';
import { findProjectFile } from '../apps/toolhistory/src/find-project-file';
import { intOption, parseArgs } from './bench-support';

const MODES = ['stream', 'interceptor', 'raw'] as const;
type Mode = (typeof MODES)[number];
const PATH = '/toolhistory.v1.ToolHistory/GetReplayHistory';
const WARM_UP = 1_000;

/** Runs in the server process: serves until told how many calls to count, then reports its CPU per call. */
async function serve(mode: Mode): Promise<void> {
  let counted = -WARM_UP;
  let calls = Number.POSITIVE_INFINITY;
  let startCpu: NodeJS.CpuUsage | undefined;
  const seen = () => {
    counted += 1;
    if (counted === 0) startCpu = process.cpuUsage();
    if (counted === calls) {
      const cpu = process.cpuUsage(startCpu);
      process.send!({ usPerCall: (cpu.user + cpu.system) / calls });
    }
  };
  process.on('message', (message: { calls: number }) => (calls = message.calls));
  let port: number;
  if (mode === 'raw') {
    const server = http2.createServer();
    server.on('stream', (stream) => {
      seen();
      stream.on('error', () => undefined);
      stream.resume();
      stream.respond({ ':status': 200, 'content-type': 'application/grpc+proto', 'grpc-status': '8' }, { endStream: true });
    });
    await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
    port = (server.address() as { port: number }).port;
  } else {
    // The replay lane held full: one slot, taken for good, and no queue. Metrics and interceptors as the service has them.
    const metrics = new ServiceMetrics();
    const admission = new ReadAdmission(
      {
        replay: { maxInFlight: 1, maxQueued: 0, maxQueueWaitMs: 100 },
        audit: { maxInFlight: 1, maxQueued: 0, maxQueueWaitMs: 100 },
        metricsTenants: 100,
      },
      metrics.admissionRecorder(),
    );
    admission.lanes.replay.request('holder', { admitted: () => undefined, refused: () => undefined });
    const lanes = admission.lanes.replay;
    const refuseEarly = lanes.refuseEarly.bind(lanes);
    lanes.refuseEarly = (tenant) => {
      seen();
      return refuseEarly(tenant);
    };
    const server = new Server({
      interceptors: [grpcCallMetrics(metrics), admissionInterceptor(admission)],
      'grpc.max_concurrent_streams': 1000,
    });
    const definition = protoLoader.loadSync(findProjectFile('proto/toolhistory/v1/toolhistory.proto'), {
      keepCase: true,
      longs: String,
      enums: String,
      defaults: false,
      oneofs: true,
    });
    const service = definition['toolhistory.v1.ToolHistory'] as ServiceDefinition;
    server.addService({ GetReplayHistory: service.GetReplayHistory }, { GetReplayHistory: () => undefined });
    port = await new Promise<number>((done, fail) =>
      server.bindAsync('127.0.0.1:0', ServerCredentials.createInsecure(), (error, bound) => (error ? fail(error) : done(bound))),
    );
    if (mode === 'stream' && refuseAtTheStream(server, admission, (lane) => metrics.admissionStreamRefusals.inc({ lane })) === 0)
      throw new Error('the gate found no HTTP/2 server');
    if (mode === 'interceptor') {
      // The interceptor asks `request`, not `refuseEarly`: count its refusals instead.
      const request = lanes.request.bind(lanes);
      lanes.request = (tenant, handlers) => {
        seen();
        return request(tenant, handlers);
      };
    }
  }
  process.send!({ port });
}

/** Sends `total` calls, `inFlight` at a time over four connections; resolves once every one has ended. */
async function flood(port: number, total: number, inFlight: number, withTenant: boolean): Promise<void> {
  const sessions = Array.from({ length: 4 }, () => http2.connect(`http://127.0.0.1:${port}`));
  // tenant_id "acme" (field 1), conversation_id "c" (field 2), framed: no compression, then the length.
  const message = Buffer.from([0x0a, 4, ...Buffer.from('acme'), 0x12, 1, ...Buffer.from('c')]);
  const frame = Buffer.concat([Buffer.from([0, 0, 0, 0, message.length]), message]);
  let sent = 0;
  let ended = 0;
  await new Promise<void>((done) => {
    const next = () => {
      if (sent >= total) return;
      const stream = sessions[sent++ % sessions.length].request({
        ':method': 'POST',
        ':path': PATH,
        'content-type': 'application/grpc',
        te: 'trailers',
        'grpc-timeout': '5000m',
        ...(withTenant ? { [TENANT_METADATA_KEY]: 'acme' } : {}),
      });
      stream.on('error', () => undefined);
      stream.resume();
      stream.on('close', () => {
        ended += 1;
        if (ended === total) done();
        else next();
      });
      stream.end(frame);
    };
    for (let i = 0; i < inFlight; i += 1) next();
  });
  sessions.forEach((session) => session.close());
}

async function measure(mode: Mode, calls: number, inFlight: number): Promise<number> {
  const child = fork(__filename, ['--serve', mode], { stdio: 'inherit' });
  try {
    const port = await new Promise<number>((done) => child.once('message', (m: { port: number }) => done(m.port)));
    const result = new Promise<number>((done) => child.once('message', (m: { usPerCall: number }) => done(m.usPerCall)));
    child.send({ calls });
    await flood(port, calls + WARM_UP, inFlight, mode !== 'interceptor');
    return await result;
  } finally {
    child.kill();
  }
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: { calls: { type: 'string' }, 'in-flight': { type: 'string' }, serve: { type: 'string' } },
  });
  if (values.serve !== undefined) return serve(values.serve as Mode);
  const calls = intOption(values, 'calls', 60_000);
  const inFlight = intOption(values, 'in-flight', 64);
  const usPerRefusal: Partial<Record<Mode, number>> = {};
  for (const mode of MODES) {
    usPerRefusal[mode] = Math.round((await measure(mode, calls, inFlight)) * 10) / 10;
    console.log(`${mode}: ${usPerRefusal[mode]} µs of CPU per refusal (${calls} calls, ${inFlight} in flight)`);
  }
  console.log(JSON.stringify({ calls, inFlight, usPerRefusal }));
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
