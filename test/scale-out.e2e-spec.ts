import type { Kafka, Producer } from 'kafkajs';
import type { ToolEvent } from '../libs/contract/src';
import { assertServiceBuilt } from './support/built-service';
import { freshSchema, FreshSchema } from './support/fresh-schema';
import { freePort, toolHistoryClient, ToolHistoryTestClient } from './support/grpc-client';
import { connectedProducer, freshTopic, publishEvents, testKafka } from './support/kafka-fixtures';
import { countRows } from './support/read-model-queries';
import { ServiceProcess, spawnService, stopService } from './support/service-harness';
import { uniqueName } from './support/test-environment';
import { runCompleted, toolCall, toolResult } from './support/tool-event-factory';
import { agentTraffic } from './support/traffic';
import { waitFor } from './support/wait-for';

const TOTAL = 6_000;

describe('scale-out: three recorders in one consumer group and two gRPC processes on one database', () => {
  let kafka: Kafka;
  let producer: Producer;
  let db: FreshSchema;
  let topic: string;
  const groupId = uniqueName('g');
  const recorders: ServiceProcess[] = [];
  const servers: ServiceProcess[] = [];
  const clients: ToolHistoryTestClient[] = [];

  const startRecorder = () => {
    // A short session lets the group settle quickly when a member leaves.
    const recorder = spawnService({
      topic,
      schema: db.schema,
      groupId,
      env: { SERVICE_ROLES: 'recorder', KAFKA_SESSION_TIMEOUT_MS: '8000' },
    });
    recorders.push(recorder);
    return recorder;
  };

  beforeAll(async () => {
    assertServiceBuilt();
    kafka = testKafka();
    db = await freshSchema('scale');
    ({ topic } = await freshTopic(kafka, 6));
    producer = await connectedProducer(kafka);
    for (let i = 0; i < 2; i += 1) {
      const port = await freePort();
      servers.push(
        spawnService({
          topic,
          schema: db.schema,
          groupId: uniqueName('unused'),
          env: { SERVICE_ROLES: 'grpc', GRPC_PORT: String(port), MIGRATE_ON_START: 'false' },
        }),
      );
      clients.push(toolHistoryClient(port));
    }
    for (const client of clients) {
      await waitFor(
        () => client.healthCheck().catch(() => 'DOWN'),
        (s) => s === 'SERVING',
        { what: 'both gRPC processes SERVING', timeoutMs: 60_000 },
      );
    }
  });

  afterAll(async () => {
    for (const client of clients) client.close();
    for (const s of [...recorders, ...servers]) await stopService(s, 'SIGKILL');
    await producer?.disconnect();
    await db?.drop();
  });

  it('records every event once while members join and leave, and both gRPC processes replay the same, then the same again after a change', async () => {
    const events: ToolEvent[] = [...agentTraffic(TOTAL, { seed: 11, conversations: 120, duplicateRate: 0.02 })];
    const distinct = new Set(events.map((e) => e.eventId)).size;
    const publish = async (from: number, to: number) => {
      for (let i = from; i < to; i += 500) await publishEvents(producer, topic, events.slice(i, Math.min(to, i + 500)));
    };
    const recorded = () => countRows(db.pool, 'events');

    for (let i = 0; i < 3; i += 1) startRecorder();
    await publish(0, TOTAL / 3);
    await waitFor(recorded, (n) => n > 500, { what: 'recording under way' });
    // A member leaves mid-stream (its partitions move to the others), and a new one joins.
    await stopService(recorders[0]);
    await publish(TOTAL / 3, (2 * TOTAL) / 3);
    startRecorder();
    await publish((2 * TOTAL) / 3, TOTAL);
    await waitFor(recorded, (n) => n >= distinct, { what: `${distinct} events`, timeoutMs: 120_000 });

    const { rows } = await db.pool.query<{ n: string; ids: string }>('SELECT count(*) AS n, count(DISTINCT event_id) AS ids FROM events');
    expect(rows[0]).toEqual({ n: String(distinct), ids: String(distinct) });
    // Each partition was recorded by more than one member over the test, each offset once.
    const { rows: offsets } = await db.pool.query('SELECT count(*)::int AS n FROM consumer_offsets WHERE group_id = $1', [groupId]);
    expect(offsets[0].n).toBe(6);

    // Replay is the same from either gRPC process, conversation by conversation, asked of both at one
    // moment: the traffic's times run up to now and beyond, so two processes' own "now" could see
    // different runs.
    const settled = asOf(Math.max(...events.map((e) => Date.parse(e.occurredAt))) + 1_000);
    const conversations = [...new Set(events.map((e) => `${e.tenantId}\u0000${e.conversationId}`))].slice(0, 25);
    for (const key of conversations) {
      const [tenant_id, conversation_id] = key.split('\u0000');
      const [a, b] = await Promise.all(clients.map((c) => c.getReplayHistory({ tenant_id, conversation_id, as_of: settled })));
      // Something to compare: each call is replayed or explained as left out.
      expect(a.turns.length + a.omitted.length).toBeGreaterThan(0);
      expect(b).toEqual(a);
    }

    // One process caches a conversation, the other is asked after a change: both answer the change.
    // All asked as of one moment past both the traffic and the change: asked as of their own "now",
    // a run of the traffic timed a little ahead would join the answer as the clock reaches it.
    const [tenant_id, conversation_id] = conversations[0].split('\u0000');
    const now = new Date().toISOString();
    const afterChange = asOf(Math.max(Number(settled.seconds) * 1000, Date.parse(now)) + 1_000);
    const before = await clients[0].getReplayHistory({ tenant_id, conversation_id, as_of: afterChange });
    const scope = { tenantId: tenant_id, conversationId: conversation_id, runId: uniqueName('run') };
    await publishEvents(producer, topic, [
      toolCall(scope, { roundIndex: 0, sequenceIndex: 0, toolCallId: 'late', toolName: 'late_tool', occurredAt: now }),
      toolResult(scope, { roundIndex: 0, sequenceIndex: 0, toolCallId: 'late', occurredAt: now }),
      runCompleted(scope, { occurredAt: now }),
    ]);
    for (const client of clients) {
      await waitFor(
        () => client.getReplayHistory({ tenant_id, conversation_id, as_of: afterChange }),
        (r) => r.turns.length === before.turns.length + 1,
        { what: 'the new run replayed by each gRPC process' },
      );
    }
    const [a, b] = await Promise.all(clients.map((c) => c.getReplayHistory({ tenant_id, conversation_id, as_of: afterChange })));
    expect(b).toEqual(a);
  });
});

/** A moment as the proto's Timestamp. */
function asOf(ms: number): { seconds: string; nanos: number } {
  return { seconds: String(Math.floor(ms / 1000)), nanos: (ms % 1000) * 1_000_000 };
}
