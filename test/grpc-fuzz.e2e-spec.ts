import { status } from '@grpc/grpc-js';
import fc from 'fast-check';
import { assertServiceBuilt } from './support/built-service';
import { freshSchema, type FreshSchema } from './support/fresh-schema';
import { freePort, toolHistoryClient, type ToolHistoryTestClient } from './support/grpc-client';
import { type ServiceProcess, spawnService, stopService } from './support/service-harness';
import { uniqueName } from './support/test-environment';
import { waitFor } from './support/wait-for';

/** What a caller may be answered for a request of its own making: never INTERNAL or UNKNOWN. */
const ACCEPTABLE = new Set([status.OK, status.INVALID_ARGUMENT, status.RESOURCE_EXHAUSTED, status.NOT_FOUND, status.CANCELLED]);

const text = fc.oneof(
  fc.string({ maxLength: 40 }),
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.constantFrom('', ' ', '\u0000', 'acme', 'a'.repeat(300), '../../etc', '%s%n', '"; DROP TABLE events; --', '🙂'.repeat(100)),
);
const int64 = fc.oneof(
  fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n }).map(String),
  fc.constantFrom('0', '-1', '9223372036854775807', '-9223372036854775808'),
);
const uint64 = fc.oneof(
  fc.bigInt({ min: 0n, max: 2n ** 64n - 1n }).map(String),
  fc.constantFrom('0', '18446744073709551615', '9223372036854775808'),
);
const int32 = fc.oneof(fc.integer({ min: -(2 ** 31), max: 2 ** 31 - 1 }), fc.constantFrom(0, -1, 2 ** 31 - 1));
const enumValue = fc.oneof(fc.integer({ min: -5, max: 100 }), fc.constant(0));
const timestamp = fc.option(fc.record({ seconds: int64, nanos: int32 }), { nil: undefined });
const maybe = <T>(arb: fc.Arbitrary<T>) => fc.option(arb, { nil: undefined });

/** Every RPC with arbitrary values in every field, as a hostile or broken caller would send them. */
const REQUESTS: Record<
  string,
  [fc.Arbitrary<Record<string, unknown>>, (client: ToolHistoryTestClient, request: Record<string, unknown>) => Promise<unknown>]
> = {
  GetReplayHistory: [
    fc.record({
      tenant_id: text,
      conversation_id: text,
      channel: maybe(text),
      as_of: timestamp,
      format: maybe(enumValue),
      freshness_window_seconds: maybe(int64),
      stale_results: maybe(enumValue),
    }),
    (c, r) => c.getReplayHistory(r),
  ],
  ListToolInvocations: [
    fc.record({
      tenant_id: text,
      conversation_id: maybe(text),
      run_id: maybe(text),
      tool_name: maybe(text),
      status: maybe(enumValue),
      from: timestamp,
      to: timestamp,
      page_size: maybe(int32),
      page_token: maybe(fc.oneof(text, fc.base64String({ maxLength: 200 }))),
    }),
    (c, r) => c.listToolInvocations(r),
  ],
  GetUsage: [fc.record({ tenant_id: text, from: timestamp, to: timestamp, bucket: maybe(enumValue) }), (c, r) => c.getUsage(r)],
  SearchToolHistory: [
    fc.record({ tenant_id: text, query: text, conversation_id: maybe(text), limit: maybe(int32), from: timestamp, to: timestamp }),
    (c, r) => c.searchToolHistory(r),
  ],
  EraseConversation: [
    fc.record({ tenant_id: text, conversation_id: text }),
    (c, r) => c.eraseConversation(r as { tenant_id: string; conversation_id: string }),
  ],
  SubscribeToolEvents: [
    fc.record({ tenant_id: text, from_position: maybe(uint64), types: maybe(fc.array(text, { maxLength: 4 })) }),
    (c, r) =>
      new Promise<void>((resolve, reject) => {
        const call = c.subscribeToolEvents(r as { tenant_id: string });
        // Admitted and open: that is an answer; it is cancelled after a moment without events.
        const timer = setTimeout(() => call.cancel(), 150);
        call.on('data', () => call.cancel());
        call.on('error', (error: { code: number }) => {
          clearTimeout(timer);
          if (error.code === status.CANCELLED) resolve();
          else reject(error);
        });
        call.on('end', () => {
          clearTimeout(timer);
          resolve();
        });
      }),
  ],
};

describe('every RPC with arbitrary field values, through the real server', () => {
  let db: FreshSchema;
  let service: ServiceProcess;
  let client: ToolHistoryTestClient;

  beforeAll(async () => {
    assertServiceBuilt();
    db = await freshSchema('fuzz');
    const port = await freePort();
    service = spawnService({
      topic: 'unused',
      schema: db.schema,
      groupId: uniqueName('g'),
      env: { SERVICE_ROLES: 'grpc', GRPC_PORT: String(port), MIGRATE_ON_START: 'false', LOG_LEVEL: 'info' },
    });
    client = toolHistoryClient(port);
    await waitFor(
      () => client.healthCheck().catch(() => 'DOWN'),
      (s) => s === 'SERVING',
      { what: 'health SERVING', timeoutMs: 60_000 },
    );
  });

  afterAll(async () => {
    client?.close();
    if (service) await stopService(service);
    await db?.drop();
  });

  it.each(Object.keys(REQUESTS))('%s never answers INTERNAL or UNKNOWN, and the service stays SERVING', async (rpc) => {
    const [requests, call] = REQUESTS[rpc];
    await fc.assert(
      fc.asyncProperty(requests, async (request) => {
        const code = await call(client, request).then(
          () => status.OK,
          (error: { code?: number; message?: string }) => error.code ?? status.UNKNOWN,
        );
        if (!ACCEPTABLE.has(code)) throw new Error(`${rpc} answered ${status[code]} to ${JSON.stringify(request).slice(0, 500)}`);
      }),
      { numRuns: 150 },
    );
    expect(await client.healthCheck()).toBe('SERVING');
    expect(service.child.exitCode).toBeNull();
  });
});
