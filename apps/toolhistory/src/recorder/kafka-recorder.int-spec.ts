import type { RunningService } from '../bootstrap';
import type { Kafka, Producer } from 'kafkajs';
import { freshSchema, FreshSchema } from '../../../../test/support/fresh-schema';
import { connectedProducer, freshTopic, publishEvents, testKafka } from '../../../../test/support/kafka-fixtures';
import { countRows, invocationsOf, readModelChecksum, runsOf, streamOf } from '../../../../test/support/read-model-queries';
import { startInProcess } from '../../../../test/support/service-harness';
import { uniqueName } from '../../../../test/support/test-environment';
import { completedRun, runCompleted, toolCall, toolResult } from '../../../../test/support/tool-event-factory';
import { waitFor } from '../../../../test/support/wait-for';

describe('recorder (real Kafka, real PostgreSQL)', () => {
  let kafka: Kafka;
  let producer: Producer;
  let db: FreshSchema;
  let topic: string;
  let groupId: string;
  let service: RunningService | undefined;
  const tenantId = uniqueName('tenant');

  const start = async () => {
    service = await startInProcess({ topic, schema: db.schema, groupId });
  };
  const stop = async () => {
    await service?.close();
    service = undefined;
  };
  const eventCount = () => countRows(db.pool, 'events');
  const waitForEvents = (n: number) => waitFor(eventCount, (c) => c >= n, { what: `${n} recorded events` });

  beforeAll(async () => {
    kafka = testKafka();
    db = await freshSchema('recorder');
    ({ topic } = await freshTopic(kafka, 3));
    groupId = uniqueName('group');
    producer = await connectedProducer(kafka);
    await start();
  });

  afterAll(async () => {
    await stop();
    await producer.disconnect();
    await db.drop();
  });

  it('records a run: events in stream order, the run completed, every call paired with its result', async () => {
    const scope = { tenantId, conversationId: uniqueName('conv'), runId: 'run-1', channel: 'support' };
    const events = completedRun(scope, [2, 1]);
    const before = await eventCount();
    await publishEvents(producer, topic, events);
    await waitForEvents(before + events.length);

    const stream = await streamOf(db.pool, tenantId, scope.conversationId);
    expect(stream.map((e) => e.event_id)).toEqual(events.map((e) => e.eventId));
    expect(stream.map((e) => e.stream_position)).toEqual(events.map((_, i) => i + 1));
    // The stored event is the contract plus the recorder's note of what redaction did.
    expect(stream[0].payload).toEqual({ ...events[0], redaction: { persist: 'full', counts: {}, originalBytes: 20 } });

    expect(await runsOf(db.pool, tenantId, scope.conversationId)).toEqual([
      expect.objectContaining({
        run_id: 'run-1',
        status: 'completed',
        channel: 'support',
        assistant_message_id: 'msg_run-1',
        finish_reason: 'stop',
        input_tokens: 1200,
      }),
    ]);
    const invocations = await invocationsOf(db.pool, tenantId, scope.conversationId);
    expect(invocations).toHaveLength(3);
    for (const row of invocations) {
      expect(row.call_event_id).not.toBeNull();
      expect(row.result_event_id).not.toBeNull();
      expect(row.result).toEqual({ status: 'shipped' });
    }
  });

  it('changes nothing when an event is delivered again', async () => {
    const scope = { tenantId, conversationId: uniqueName('conv'), runId: 'run-dup' };
    const events = completedRun(scope, [1]);
    const before = await eventCount();
    await publishEvents(producer, topic, events);
    await waitForEvents(before + events.length);
    const checksum = await readModelChecksum(db.pool);

    // The producer retries: the same events again, plus one new event behind them as a marker.
    const marker = runCompleted({ tenantId, conversationId: uniqueName('conv'), runId: 'marker' });
    await publishEvents(producer, topic, [...events, events[1], marker]);
    await waitForEvents(before + events.length + 1);
    await waitFor(
      () => streamOf(db.pool, tenantId, marker.conversationId),
      (s) => s.length === 1,
      { what: 'the marker' },
    );

    expect(await streamOf(db.pool, tenantId, scope.conversationId)).toHaveLength(events.length);
    expect(await eventCount()).toBe(before + events.length + 1);
    const markerOnly = await readModelChecksum(db.pool);
    expect(markerOnly).not.toBe(checksum); // the marker's run was added ...
    expect(await runsOf(db.pool, tenantId, scope.conversationId)).toHaveLength(1); // ... and nothing else changed
    expect(await invocationsOf(db.pool, tenantId, scope.conversationId)).toHaveLength(1);
  });

  it('pairs a result that arrives before its call once the call arrives', async () => {
    const scope = { tenantId, conversationId: uniqueName('conv'), runId: 'run-early' };
    const result = toolResult(scope, { roundIndex: 0, sequenceIndex: 0, toolCallId: 'call_x', result: 'pong' });
    const call = toolCall(scope, { roundIndex: 0, sequenceIndex: 0, toolCallId: 'call_x', toolName: 'ping' });
    const before = await eventCount();
    await publishEvents(producer, topic, [result]);
    await waitForEvents(before + 1);
    expect(await invocationsOf(db.pool, tenantId, scope.conversationId)).toEqual([
      expect.objectContaining({ tool_name: null, result: 'pong', call_event_id: null }),
    ]);

    await publishEvents(producer, topic, [call]);
    await waitForEvents(before + 2);
    expect(await invocationsOf(db.pool, tenantId, scope.conversationId)).toEqual([
      expect.objectContaining({ tool_name: 'ping', result: 'pong', call_event_id: call.eventId, result_event_id: result.eventId }),
    ]);
  });

  it('records a call that arrives after its run ended', async () => {
    const scope = { tenantId, conversationId: uniqueName('conv'), runId: 'run-late' };
    const events = [runCompleted(scope, { finishReason: 'terminated' }), toolCall(scope, { roundIndex: 3, sequenceIndex: 0 })];
    const before = await eventCount();
    await publishEvents(producer, topic, events);
    await waitForEvents(before + 2);
    expect(await runsOf(db.pool, tenantId, scope.conversationId)).toEqual([
      expect.objectContaining({ status: 'completed', finish_reason: 'terminated' }),
    ]);
    expect(await invocationsOf(db.pool, tenantId, scope.conversationId)).toEqual([
      expect.objectContaining({ round_index: 3, call_after_run_end: true, result: null }),
    ]);
  });

  it('keeps the order of each conversation across partitions and interleaved producers', async () => {
    const conversations = Array.from({ length: 6 }, () => uniqueName('conv'));
    const perConversation = new Map<string, string[]>();
    const events = [];
    for (let round = 0; round < 40; round += 1) {
      for (const conversationId of conversations) {
        const e = toolCall({ tenantId, conversationId, runId: 'r' }, { roundIndex: round, sequenceIndex: 0 });
        events.push(e);
        perConversation.set(conversationId, [...(perConversation.get(conversationId) ?? []), e.eventId]);
      }
    }
    const before = await eventCount();
    // Many small sends, as concurrent agent workers would publish.
    for (let i = 0; i < events.length; i += 7) await publishEvents(producer, topic, events.slice(i, i + 7));
    await waitForEvents(before + events.length);
    for (const conversationId of conversations) {
      const stream = await streamOf(db.pool, tenantId, conversationId);
      expect(stream.map((e) => e.event_id)).toEqual(perConversation.get(conversationId));
      expect(stream.map((e) => e.stream_position)).toEqual(stream.map((_, i) => i + 1));
    }
  });

  it('resumes from the offsets in PostgreSQL after a restart, even when Kafka forgot its own', async () => {
    const scope = { tenantId, conversationId: uniqueName('conv'), runId: 'run-restart' };
    const first = completedRun(scope, [1]);
    const before = await eventCount();
    await publishEvents(producer, topic, first);
    await waitForEvents(before + first.length);
    const checksum = await readModelChecksum(db.pool);
    await stop();

    // Rewind the group's Kafka offsets to the start: every old message is redelivered.
    const admin = kafka.admin();
    await admin.connect();
    await admin.resetOffsets({ groupId, topic, earliest: true });
    await admin.disconnect();

    const second = runCompleted({ tenantId, conversationId: uniqueName('conv'), runId: 'after-restart' });
    await publishEvents(producer, topic, [second]);
    await start();
    await waitForEvents(before + first.length + 1);
    await waitFor(
      () => streamOf(db.pool, tenantId, second.conversationId),
      (s) => s.length === 1,
      { what: 'the new event' },
    );
    expect(await eventCount()).toBe(before + first.length + 1);
    expect(await streamOf(db.pool, tenantId, scope.conversationId)).toHaveLength(first.length);
    expect(await readModelChecksum(db.pool)).not.toBe(checksum);
    const offsets = await db.pool.query('SELECT partition, next_offset FROM consumer_offsets WHERE group_id = $1', [groupId]);
    expect(offsets.rowCount).toBeGreaterThan(0);
  });
});

describe('topic creation', () => {
  it('creates the events and dead-letter topics with the configured partition count', async () => {
    const kafka = testKafka();
    const db = await freshSchema('topics');
    const topic = uniqueName('created-by-service').replace(/_/g, '-');
    const service = await startInProcess({ topic, schema: db.schema, groupId: uniqueName('g'), env: { TOOL_EVENTS_PARTITIONS: '4' } });
    try {
      const admin = kafka.admin();
      await admin.connect();
      const metadata = await admin.fetchTopicMetadata({ topics: [topic, `${topic}.dlq`] });
      await admin.disconnect();
      expect(metadata.topics.map((t) => [t.name, t.partitions.length]).sort()).toEqual([
        [topic, 4],
        [`${topic}.dlq`, 4],
      ]);
    } finally {
      await service.close();
      await db.drop();
    }
  });
});
