/**
 * Subscription benchmark: events/s delivered to one SubscribeToolEvents
 * subscriber over gRPC on loopback, reading a recorded stream from the
 * start (a billing consumer catching up), messages decoded as a client
 * would. Seeds --events events (default 500,000; ~1 KB results) of one
 * tenant straight into the event store. The last line is one JSON object.
 *
 *   npm run bench:subscribe -- [--events 500000] [--keep]
 */
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import { resolve } from 'node:path';
import { freePort } from '../test/support/grpc-client';
import { cpuSeconds, intOption, parseArgs, peakRssMiB, startGrpcService, stopChild, runInBenchSchema } from './bench-support';
import { seedEvents } from './seed-data';

const PROTO = resolve(__dirname, '../../proto/toolhistory/v1/toolhistory.proto');

function main(): void {
  const { values } = parseArgs({ options: { events: { type: 'string' }, keep: { type: 'boolean' } } });
  const events = intOption(values, 'events', 500_000);
  runInBenchSchema('bench_subscribe', values.keep === true, async ({ pool, schema, databaseUrl }) => {
    let service: Awaited<ReturnType<typeof startGrpcService>> | undefined;
    try {
      console.log(`seeding ${events} events of one tenant into ${schema}`);
      const seedStarted = Date.now();
      await seedEvents(pool, { events, tenants: 1 }, (done) => process.stdout.write(`  ${done}\r`));
      console.log(`  seeded in ${((Date.now() - seedStarted) / 1000).toFixed(1)} s`);

      const port = await freePort();
      service = await startGrpcService({ databaseUrl, schema, port });
      const definition = protoLoader.loadSync(PROTO, { keepCase: true, longs: String, enums: String, defaults: true, oneofs: true });
      const loaded = grpc.loadPackageDefinition(definition) as unknown as {
        toolhistory: { v1: { ToolHistory: grpc.ServiceClientConstructor } };
      };
      const client = new loaded.toolhistory.v1.ToolHistory(`127.0.0.1:${port}`, grpc.credentials.createInsecure());

      const serviceCpuBefore = cpuSeconds(service.pid!);
      const benchCpuBefore = cpuSeconds(process.pid);
      const started = process.hrtime.bigint();
      let received = 0;
      let bytes = 0;
      let firstMs = 0;
      await new Promise<void>((done, fail) => {
        const call = (
          client as unknown as { SubscribeToolEvents: (r: unknown) => grpc.ClientReadableStream<{ payload_json: string }> }
        ).SubscribeToolEvents({
          tenant_id: 'seed-tenant-0',
          from_position: '0',
        });
        call.on('data', (message) => {
          if (received === 0) firstMs = Number(process.hrtime.bigint() - started) / 1e6;
          received += 1;
          bytes += message.payload_json.length;
          if (received === events) call.cancel();
        });
        call.on('error', (error: grpc.ServiceError) => (error.code === grpc.status.CANCELLED ? done() : fail(error)));
        call.on('end', () => fail(new Error(`stream ended after ${received} events`)));
      });
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      client.close();
      const figures = {
        bench: 'subscribe',
        events: received,
        seconds: Number(seconds.toFixed(2)),
        eventsPerSecond: Math.round(received / seconds),
        payloadMiBPerSecond: Number((bytes / 1024 / 1024 / seconds).toFixed(1)),
        firstEventMs: Number(firstMs.toFixed(1)),
        serviceCpuSeconds: Number((cpuSeconds(service.pid!) - serviceCpuBefore).toFixed(1)),
        subscriberCpuSeconds: Number((cpuSeconds(process.pid) - benchCpuBefore).toFixed(1)),
        servicePeakRssMiB: peakRssMiB(service.pid!),
      };
      console.log(
        `one subscriber received ${figures.events} events in ${figures.seconds} s: ${figures.eventsPerSecond} events/s (${figures.payloadMiBPerSecond} MiB/s of payload)`,
      );
      console.log(
        `CPU: service ${figures.serviceCpuSeconds} s, subscriber ${figures.subscriberCpuSeconds} s; service peak RSS ${figures.servicePeakRssMiB} MiB`,
      );
      console.log(JSON.stringify(figures));
    } finally {
      await stopChild(service);
    }
  });
}

main();
