import { status } from '@grpc/grpc-js';
import type { Kafka, Producer } from 'kafkajs';
import type { ToolEvent } from '../libs/contract/src';
import { assertServiceBuilt } from './support/built-service';
import { freshSchema, FreshSchema } from './support/fresh-schema';
import { freePort, RecordedEventMessage, toolHistoryClient, ToolHistoryTestClient } from './support/grpc-client';
import { connectedProducer, freshTopic, publishEvents, testKafka } from './support/kafka-fixtures';
import { ServiceProcess, spawnService, stopService } from './support/service-harness';
import { seededRandom, agentTraffic } from './support/traffic';
import { uniqueName } from './support/test-environment';
import { waitFor } from './support/wait-for';

const BILLED_EVENTS = 50_000;
const OTHER_EVENTS = 3_000;
const DISCONNECTS = 10;

interface StreamOutcome {
  received: RecordedEventMessage[];
  ended: 'cancelled' | 'end';
}

/**
 * Follows one subscription until `stopWhen` says to disconnect (the caller
 * cancels its call, as a consumer that crashes or redeploys would).
 */
function follow(
  client: ToolHistoryTestClient,
  request: { tenant_id: string; from_position?: string; types?: string[] },
  stopWhen: (received: RecordedEventMessage[]) => boolean,
): Promise<StreamOutcome> {
  return new Promise((resolve, reject) => {
    const received: RecordedEventMessage[] = [];
    const call = client.subscribeToolEvents(request);
    let cancelled = false;
    call.on('data', (message: RecordedEventMessage) => {
      // Messages already in flight when we cancel are still ours to count, as a real consumer would.
      received.push(message);
      if (!cancelled && stopWhen(received)) {
        cancelled = true;
        call.cancel();
      }
    });
    call.on('error', (error: { code?: number }) =>
      error.code === status.CANCELLED ? resolve({ received, ended: 'cancelled' }) : reject(error),
    );
    call.on('end', () => resolve({ received, ended: 'end' }));
  });
}

describe('SubscribeToolEvents: a billing consumer follows the recorded stream over gRPC', () => {
  let kafka: Kafka;
  let producer: Producer;
  let db: FreshSchema;
  let topic: string;
  let service: ServiceProcess;
  let client: ToolHistoryTestClient;
  const tenantId = 'tenant-0';

  beforeAll(async () => {
    assertServiceBuilt();
    kafka = testKafka();
    db = await freshSchema('subscribe');
    ({ topic } = await freshTopic(kafka, 3));
    producer = await connectedProducer(kafka);
    const port = await freePort();
    service = spawnService({
      topic,
      schema: db.schema,
      groupId: uniqueName('g'),
      env: { SERVICE_ROLES: 'recorder,grpc', GRPC_PORT: String(port) },
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
    await producer?.disconnect();
    await db?.drop();
  });

  it('counts every one of 50,000 events exactly once while disconnecting 10 times, live and caught up', async () => {
    const billed: ToolEvent[] = [...agentTraffic(BILLED_EVENTS, { tenants: 1, seed: 11, conversations: 500 })];
    const other: ToolEvent[] = [...agentTraffic(OTHER_EVENTS, { tenants: 1, seed: 12, conversations: 50 })].map((e) => ({
      ...e,
      tenantId: 'tenant-other',
    }));
    const expected = new Set(billed.map((e) => e.eventId));
    expect(expected.size).toBe(BILLED_EVENTS);

    // Published while the consumer follows, so it reads both recorded and live events.
    const publishing = (async () => {
      for (let i = 0; i < BILLED_EVENTS; i += 1_000) {
        await publishEvents(producer, topic, billed.slice(i, i + 1_000));
        if (i % 10_000 === 0) await publishEvents(producer, topic, other.slice(i / 10, i / 10 + 600));
      }
    })();

    const random = seededRandom(5);
    const counts = new Map<string, number>();
    const positions: bigint[] = [];
    let lastPosition = '0';
    let disconnects = 0;
    let resumes = 0;
    while (counts.size < expected.size) {
      const cutAfter = disconnects < DISCONNECTS ? 500 + Math.floor(random() * 5_000) : Number.POSITIVE_INFINITY;
      const outcome = await follow(
        client,
        { tenant_id: tenantId, from_position: lastPosition },
        (received) => received.length >= cutAfter || counts.size + received.length >= expected.size,
      );
      for (const message of outcome.received) {
        expect(message.tenant_id).toBe(tenantId);
        counts.set(message.event_id, (counts.get(message.event_id) ?? 0) + 1);
        positions.push(BigInt(message.position));
        lastPosition = message.position;
      }
      if (counts.size < expected.size) disconnects += 1;
      resumes += 1;
      expect(resumes).toBeLessThan(200);
    }
    await publishing;

    expect(disconnects).toBeGreaterThanOrEqual(DISCONNECTS);
    expect(counts.size).toBe(BILLED_EVENTS);
    expect([...counts.keys()].every((id) => expected.has(id))).toBe(true);
    expect([...counts.values()].every((n) => n === 1)).toBe(true);
    for (let i = 1; i < positions.length; i += 1) expect(positions[i] > positions[i - 1]).toBe(true);
  });

  it('delivers only the types asked for, with the redacted payload and its positions', async () => {
    const { received } = await follow(client, { tenant_id: tenantId, types: ['RunCompleted'] }, (r) => r.length >= 20);
    expect(received.length).toBeGreaterThanOrEqual(20);
    for (const message of received) {
      expect(message.type).toBe('RunCompleted');
      const payload = JSON.parse(message.payload_json) as ToolEvent;
      expect(payload).toMatchObject({
        eventId: message.event_id,
        type: 'RunCompleted',
        tenantId,
        conversationId: message.conversation_id,
        runId: message.run_id,
      });
      expect(message.stream_position).toBeGreaterThan(0);
      expect(Number(message.recorded_at.seconds)).toBeGreaterThan(0);
    }
  });

  it('refuses a request it cannot serve, naming the field', async () => {
    await expect(follow(client, { tenant_id: '' }, () => true)).rejects.toMatchObject({
      code: status.INVALID_ARGUMENT,
      details: 'tenant_id is required',
    });
    await expect(follow(client, { tenant_id: tenantId, types: ['ToolCalled'] }, () => true)).rejects.toMatchObject({
      code: status.INVALID_ARGUMENT,
      details: expect.stringContaining('"ToolCalled"'),
    });
  });
});
