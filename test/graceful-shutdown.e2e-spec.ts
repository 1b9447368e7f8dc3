import * as grpc from '@grpc/grpc-js';
import { service as healthService } from 'grpc-health-check';
import type { Producer } from 'kafkajs';
import { Client } from 'pg';
import { assertServiceBuilt } from './support/built-service';
import { freshSchema, type FreshSchema } from './support/fresh-schema';
import { freePort, type RecordedEventMessage, toolHistoryClient } from './support/grpc-client';
import { connectedProducer, freshTopic, publishEvents, testKafka } from './support/kafka-fixtures';
import { type ServiceProcess, spawnService, stopService } from './support/service-harness';
import { uniqueName } from './support/test-environment';
import { runCompleted, toolCall, toolResult } from './support/tool-event-factory';
import { countRows } from './support/read-model-queries';
import { waitFor } from './support/wait-for';

interface StreamEnd {
  messages: unknown[];
  error?: { code: number; details: string };
}

/** Collects a server stream's messages until it ends, and how it ended. */
function collect<T>(call: grpc.ClientReadableStream<T>, onMessage: (message: T) => void = () => undefined): Promise<StreamEnd> {
  const messages: unknown[] = [];
  return new Promise((resolve) => {
    call.on('data', (message: T) => {
      messages.push(message);
      onMessage(message);
    });
    call.on('error', (error: { code: number; details: string }) =>
      resolve({ messages, error: { code: error.code, details: error.details } }),
    );
    call.on('end', () => resolve({ messages }));
  });
}

describe('SIGTERM: NOT_SERVING first, streams ended cleanly, the call in flight finished, then exit 0', () => {
  let producer: Producer;
  let db: FreshSchema;
  let service: ServiceProcess;
  let port: number;
  const tenantId = uniqueName('tenant');
  const conversationId = uniqueName('conv');

  beforeAll(async () => {
    assertServiceBuilt();
    db = await freshSchema('shutdown');
    const kafka = testKafka();
    const { topic } = await freshTopic(kafka, 3);
    producer = await connectedProducer(kafka);
    port = await freePort();
    service = spawnService({
      topic,
      schema: db.schema,
      groupId: uniqueName('g'),
      env: { SERVICE_ROLES: 'recorder,grpc', GRPC_PORT: String(port), GRPC_SHUTDOWN_GRACE_MS: '20000', LOG_LEVEL: 'info' },
    });
    const scope = { tenantId, conversationId, runId: 'r1' };
    const events = [
      toolCall(scope, { roundIndex: 0, sequenceIndex: 0, toolCallId: 'c1' }),
      toolResult(scope, { roundIndex: 0, sequenceIndex: 0, toolCallId: 'c1' }),
      runCompleted(scope, { assistantMessageId: 'm1', finishReason: 'stop' }),
    ];
    await publishEvents(producer, topic, events);
    await waitFor(
      () => countRows(db.pool, 'invocations'),
      (n) => n === 1,
      { what: 'the run recorded', timeoutMs: 60_000 },
    );
  });

  afterAll(async () => {
    await producer?.disconnect();
    if (service) await stopService(service);
    await db?.drop();
  });

  it('behaves so with an erasure waiting on a row lock, a subscription and a health watch open', async () => {
    const client = toolHistoryClient(port);
    const address = `127.0.0.1:${port}`;
    const Health = grpc.makeClientConstructor(healthService as unknown as grpc.ServiceDefinition, 'Health');
    const health = new Health(address, grpc.credentials.createInsecure()) as unknown as {
      Watch: (request: { service: string }) => grpc.ClientReadableStream<{ status: string }>;
      close(): void;
    };
    await waitFor(
      () => client.healthCheck().catch(() => 'DOWN'),
      (s) => s === 'SERVING',
      { what: 'health SERVING' },
    );

    // A health watch and a subscription, both open and reading.
    const statuses: string[] = [];
    const watched = collect(health.Watch({ service: '' }), (m) => statuses.push(m.status));
    await waitFor(
      async () => statuses,
      (s) => s.includes('SERVING'),
      { what: 'the watch to report SERVING' },
    );
    let subscribed = false;
    const subscription = collect<RecordedEventMessage>(client.subscribeToolEvents({ tenant_id: tenantId }), () => (subscribed = true));
    await waitFor(async () => subscribed, Boolean, { what: 'the subscription to deliver' });

    // An erasure in flight: it waits on a row this test holds locked.
    const locker = new Client({ connectionString: db.url, options: `-c search_path=${db.schema}` });
    await locker.connect();
    await locker.query('BEGIN');
    await locker.query('SELECT 1 FROM invocations WHERE tenant_id = $1 FOR UPDATE', [tenantId]);
    const erasure = client.eraseConversation(
      { tenant_id: tenantId, conversation_id: conversationId },
      { deadline: new Date(Date.now() + 60_000) },
    );
    const waiting = () =>
      db.pool
        .query(
          `SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name LIKE 'toolhistory%' AND wait_event_type = 'Lock' AND datname = current_database()`,
        )
        .then((r) => r.rows[0].n as number);
    await waitFor(waiting, (n) => n > 0, { what: 'the erasure to wait on the lock' });

    const outputBefore = service.output().length;
    service.child.kill('SIGTERM');

    // The watch is told NOT_SERVING, then ends; the subscription ends with UNAVAILABLE, saying to resume.
    const watchEnd = await watched;
    expect(statuses.at(-1)).toBe('NOT_SERVING');
    expect(watchEnd.error).toEqual({ code: grpc.status.UNAVAILABLE, details: 'server shutting down' });
    const subscriptionEnd = await subscription;
    expect(subscriptionEnd.messages).toHaveLength(3);
    expect(subscriptionEnd.error).toEqual({
      code: grpc.status.UNAVAILABLE,
      details: 'server shutting down: resume from your last position',
    });

    // New calls are not taken while the erasure finishes.
    const fresh = toolHistoryClient(port);
    await waitFor(
      () =>
        fresh.getReplayHistory({ tenant_id: tenantId, conversation_id: conversationId }, { deadline: new Date(Date.now() + 1_000) }).then(
          () => 'answered',
          (e: { code: number }) => e.code,
        ),
      (answer) => answer === grpc.status.UNAVAILABLE,
      { what: 'new calls to be refused' },
    );
    fresh.close();
    expect(service.child.exitCode).toBeNull();

    // Released, the erasure completes and is answered; then the process exits 0.
    await locker.query('ROLLBACK');
    await locker.end();
    expect(await erasure).toEqual({ erased_events: '3', erased_invocations: '1' });
    expect(await service.exited).toEqual({ code: 0, signal: null });

    const shutdownLog = service
      .output()
      .slice(outputBefore)
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    const at = (msg: string) => shutdownLog.findIndex((l) => l.msg === msg);
    expect(at('health changed')).toBeGreaterThanOrEqual(0);
    expect(shutdownLog[at('health changed')]).toMatchObject({ status: 'NOT_SERVING' });
    expect(shutdownLog[at('gRPC server stopped')]).toMatchObject({ graceful: true, subscriptionsEnded: 1, healthWatchesEnded: 1 });
    expect(at('health changed')).toBeLessThan(at('gRPC server stopped'));
    expect(at('conversation erased')).toBeLessThan(at('gRPC server stopped'));
    expect(at('gRPC server stopped')).toBeLessThan(at('recorder stopped'));
    client.close();
    health.close();
  });
});
