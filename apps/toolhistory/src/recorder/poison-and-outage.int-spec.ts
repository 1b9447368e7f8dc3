import type { RunningService } from '../bootstrap';
import type { Kafka, Producer } from 'kafkajs';
import { DEAD_LETTER_HEADERS } from '@toolhistory/messaging';
import { freshSchema, FreshSchema } from '../../../../test/support/fresh-schema';
import { connectedProducer, freshTopic, readTopic, testKafka } from '../../../../test/support/kafka-fixtures';
import { countRows, streamOf } from '../../../../test/support/read-model-queries';
import { startInProcess } from '../../../../test/support/service-harness';
import { TcpProxy } from '../../../../test/support/tcp-proxy';
import { TEST_DATABASE_URL, uniqueName } from '../../../../test/support/test-environment';
import { runCompleted, toolCall, toolResult } from '../../../../test/support/tool-event-factory';
import { waitFor } from '../../../../test/support/wait-for';

describe('poison messages (real Kafka, real PostgreSQL)', () => {
  let kafka: Kafka;
  let producer: Producer;
  let db: FreshSchema;
  let topic: string;
  let deadLetterTopic: string;
  let service: RunningService;

  beforeAll(async () => {
    kafka = testKafka();
    db = await freshSchema('poison');
    ({ topic, deadLetterTopic } = await freshTopic(kafka, 1));
    producer = await connectedProducer(kafka);
    service = await startInProcess({ topic, schema: db.schema, groupId: uniqueName('g'), env: { MAX_EVENT_BYTES: '4096' } });
  });

  afterAll(async () => {
    await service.close();
    await producer.disconnect();
    await db.drop();
  });

  it('dead-letters each kind of poison with its reason and origin, records the neighbours, and keeps the partition moving', async () => {
    const scope = { tenantId: 'acme', conversationId: uniqueName('conv'), runId: 'r1' };
    const good = [
      toolCall(scope, { roundIndex: 0, sequenceIndex: 0 }),
      toolResult(scope, { roundIndex: 0, sequenceIndex: 0 }),
      runCompleted(scope),
    ];
    const poison: Array<[string, string]> = [
      ['NOT_JSON', '{"eventId": "abc", oops'],
      ['INVALID_EVENT', JSON.stringify({ ...toolCall(scope, { roundIndex: -1, sequenceIndex: 0 }) })],
      ['OVERSIZE', JSON.stringify(toolResult(scope, { roundIndex: 0, sequenceIndex: 1, result: 'x'.repeat(5_000) }))],
      ['UNSUPPORTED_SCHEMA_VERSION', JSON.stringify({ ...runCompleted(scope), schemaVersion: 3 })],
      ['UNKNOWN_EVENT_TYPE', JSON.stringify({ ...runCompleted(scope), type: 'RunPaused' })],
      // Valid by the contract, but PostgreSQL cannot store a NUL character in JSON.
      ['UNSTORABLE_EVENT', JSON.stringify(toolCall(scope, { roundIndex: 0, sequenceIndex: 2, arguments: { q: 'a\u0000b' } }))],
    ];
    // One send: valid and poison messages interleaved in one partition batch.
    await producer.send({
      topic,
      acks: -1,
      messages: [
        { key: scope.conversationId, value: JSON.stringify(good[0]) },
        ...poison.slice(0, 3).map(([, value]) => ({ key: scope.conversationId, value })),
        { key: scope.conversationId, value: JSON.stringify(good[1]) },
        ...poison.slice(3).map(([, value]) => ({ key: scope.conversationId, value })),
        { key: scope.conversationId, value: JSON.stringify(good[2]) },
      ],
    });

    const letters = await readTopic(kafka, deadLetterTopic, poison.length);
    expect(letters.map((l) => l.headers[DEAD_LETTER_HEADERS.errorCode])).toEqual(poison.map(([code]) => code));
    for (const letter of letters) {
      expect(letter.headers[DEAD_LETTER_HEADERS.originalTopic]).toBe(topic);
      expect(letter.headers[DEAD_LETTER_HEADERS.originalPartition]).toBe('0');
      expect(Number(letter.headers[DEAD_LETTER_HEADERS.originalOffset])).toBeGreaterThanOrEqual(0);
      expect(letter.headers[DEAD_LETTER_HEADERS.reason].length).toBeGreaterThan(5);
      expect(letter.key).toBe(scope.conversationId);
    }
    expect(letters[1].headers[DEAD_LETTER_HEADERS.reason]).toMatch(/roundIndex must not be negative/);
    expect(letters[2].headers[DEAD_LETTER_HEADERS.reason]).toMatch(/larger than the limit of 4096 bytes/);
    // JSON poison is kept (redacted by the detectors; these hold nothing to redact); other bytes only by size.
    expect(letters.map((l) => l.value)).toEqual([
      JSON.stringify({ unparseable: true, originalBytes: Buffer.byteLength(poison[0][1]) }),
      ...poison.slice(1).map(([, value]) => value),
    ]);

    const stream = await waitFor(
      () => streamOf(db.pool, 'acme', scope.conversationId),
      (s) => s.length === 3,
      { what: 'the valid neighbours' },
    );
    expect(stream.map((e) => e.event_id)).toEqual(good.map((e) => e.eventId));

    // The partition is not stalled: a later event is recorded too.
    const later = runCompleted({ ...scope, conversationId: uniqueName('conv') });
    await producer.send({ topic, messages: [{ key: later.conversationId, value: JSON.stringify(later) }] });
    await waitFor(
      () => streamOf(db.pool, 'acme', later.conversationId),
      (s) => s.length === 1,
      { what: 'the later event' },
    );
  });
});

describe('database outage (real Kafka, PostgreSQL behind a loopback proxy)', () => {
  it('retries with backoff, dead-letters nothing, and records everything once the database is back', async () => {
    const kafka = testKafka();
    const db = await freshSchema('outage');
    const { topic, deadLetterTopic } = await freshTopic(kafka, 2);
    const producer = await connectedProducer(kafka);
    const target = new URL(TEST_DATABASE_URL);
    const proxy = new TcpProxy(target.hostname, Number(target.port || 5432));
    await proxy.start();
    const viaProxy = new URL(TEST_DATABASE_URL);
    viaProxy.port = String(proxy.port);
    const service = await startInProcess({ topic, schema: db.schema, groupId: uniqueName('g'), databaseUrl: viaProxy.toString() });
    try {
      await proxy.cut();
      const scope = { tenantId: 'acme', conversationId: uniqueName('conv'), runId: 'r' };
      const events = Array.from({ length: 20 }, (_, i) => toolCall(scope, { roundIndex: i, sequenceIndex: 0 }));
      await producer.send({ topic, acks: -1, messages: events.map((e) => ({ key: e.conversationId, value: JSON.stringify(e) })) });

      // While the database is unreachable: nothing recorded, nothing dead-lettered.
      await new Promise((r) => setTimeout(r, 3_000));
      expect(await countRows(db.pool, 'events')).toBe(0);
      const admin = kafka.admin();
      await admin.connect();
      const deadLetterOffsets = await admin.fetchTopicOffsets(deadLetterTopic);
      await admin.disconnect();
      expect(deadLetterOffsets.every((p) => p.high === '0')).toBe(true);

      await proxy.restore();
      const stream = await waitFor(
        () => streamOf(db.pool, 'acme', scope.conversationId),
        (s) => s.length === events.length,
        {
          what: 'all events after the outage',
          timeoutMs: 60_000,
        },
      );
      expect(stream.map((e) => e.event_id)).toEqual(events.map((e) => e.eventId));
    } finally {
      await service.close();
      await proxy.cut();
      await producer.disconnect();
      await db.drop();
    }
  });
});
