import type { Kafka, Producer } from 'kafkajs';
import type { ToolEvent } from '../libs/contract/src';
import { assertServiceBuilt } from './support/built-service';
import { freshSchema, FreshSchema } from './support/fresh-schema';
import { connectedProducer, freshTopic, publishEvents, testKafka } from './support/kafka-fixtures';
import { countRows } from './support/read-model-queries';
import { ServiceProcess, spawnService, stopService } from './support/service-harness';
import { uniqueName } from './support/test-environment';
import { agentTraffic } from './support/traffic';
import { waitFor } from './support/wait-for';

const TOTAL = 10_000;

describe('crash recovery: SIGKILL in the middle of a 10,000-event stream', () => {
  let kafka: Kafka;
  let producer: Producer;
  let db: FreshSchema;
  let topic: string;
  const groupId = uniqueName('g');
  const services: ServiceProcess[] = [];

  const start = () => {
    // A short session lets the group notice a killed member quickly.
    const service = spawnService({ topic, schema: db.schema, groupId, env: { KAFKA_SESSION_TIMEOUT_MS: '8000' } });
    services.push(service);
    return service;
  };

  beforeAll(async () => {
    assertServiceBuilt();
    kafka = testKafka();
    db = await freshSchema('crash');
    ({ topic } = await freshTopic(kafka, 6));
    producer = await connectedProducer(kafka);
  });

  afterAll(async () => {
    for (const s of services) await stopService(s, 'SIGKILL');
    await producer.disconnect();
    await db.drop();
  });

  it('records every event exactly once, in order per conversation, with every call paired', async () => {
    const events: ToolEvent[] = [...agentTraffic(TOTAL, { seed: 7, conversations: 300 })];
    const publish = async (from: number, to: number) => {
      for (let i = from; i < to; i += 500) await publishEvents(producer, topic, events.slice(i, Math.min(to, i + 500)));
    };
    const recorded = () => countRows(db.pool, 'events');

    const first = start();
    await publish(0, TOTAL / 2);
    const atFirstKill = await waitFor(recorded, (n) => n >= 1_500, { what: 'recording under way' });
    expect(await stopService(first, 'SIGKILL')).toEqual({ code: null, signal: 'SIGKILL' });
    await publish(TOTAL / 2, TOTAL);

    // Kill the restarted recorder again as soon as it makes progress, mid catch-up.
    const afterFirstKill = await recorded();
    const second = start();
    await waitFor(recorded, (n) => n > afterFirstKill, { what: 'progress after restart', timeoutMs: 60_000 });
    expect(await stopService(second, 'SIGKILL')).toEqual({ code: null, signal: 'SIGKILL' });
    const atSecondKill = await recorded();
    expect(atFirstKill).toBeLessThan(TOTAL);
    expect(atSecondKill).toBeLessThan(TOTAL);

    const third = start();
    await waitFor(recorded, (n) => n >= TOTAL, { what: `${TOTAL} events`, timeoutMs: 90_000 });
    await new Promise((r) => setTimeout(r, 1_000));
    await stopService(third);

    const { rows: totals } = await db.pool.query<{ n: string; distinct_ids: string }>(
      'SELECT count(*) AS n, count(DISTINCT event_id) AS distinct_ids FROM events',
    );
    expect(totals[0]).toEqual({ n: String(TOTAL), distinct_ids: String(TOTAL) });

    // Each conversation's stream holds its events in publish order, positions 1..n without gaps.
    const { rows } = await db.pool.query<{ conversation_id: string; ids: string[]; positions: number[] }>(
      `SELECT conversation_id, array_agg(event_id::text ORDER BY stream_position) AS ids,
              array_agg(stream_position ORDER BY stream_position) AS positions
       FROM events GROUP BY tenant_id, conversation_id`,
    );
    const expected = new Map<string, string[]>();
    for (const e of events) expected.set(e.conversationId, [...(expected.get(e.conversationId) ?? []), e.eventId]);
    expect(rows).toHaveLength(expected.size);
    for (const row of rows) {
      expect(row.ids).toEqual(expected.get(row.conversation_id));
      expect(row.positions).toEqual(row.ids.map((_, i) => i + 1));
    }

    // The read model: one row per call, all paired (the traffic answers every call), runs completed.
    const calls = events.filter((e) => e.type === 'ToolCallRequested').length;
    expect(await countRows(db.pool, 'invocations')).toBe(calls);
    const { rows: unpaired } = await db.pool.query('SELECT 1 FROM invocations WHERE call_event_id IS NULL OR result_event_id IS NULL');
    expect(unpaired).toHaveLength(0);
    const completedRuns = new Set(events.filter((e) => e.type === 'RunCompleted').map((e) => e.runId)).size;
    const { rows: runStatus } = await db.pool.query<{ status: string; n: string }>(
      'SELECT status, count(*) AS n FROM runs GROUP BY status',
    );
    expect(runStatus.find((r) => r.status === 'completed')?.n).toBe(String(completedRuns));

    // The committed offsets are the end of every partition.
    const admin = kafka.admin();
    await admin.connect();
    const ends = await admin.fetchTopicOffsets(topic);
    await admin.disconnect();
    const { rows: offsets } = await db.pool.query<{ partition: number; next_offset: string }>(
      'SELECT partition, next_offset FROM consumer_offsets WHERE group_id = $1 ORDER BY partition',
      [groupId],
    );
    expect(offsets.map((o) => [o.partition, o.next_offset])).toEqual(
      ends
        .filter((p) => p.high !== '0')
        .sort((a, b) => a.partition - b.partition)
        .map((p) => [p.partition, p.high]),
    );
  });
});
