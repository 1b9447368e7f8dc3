import type { Kafka, Producer } from 'kafkajs';
import { DEAD_LETTER_HEADERS } from '@toolhistory/messaging';
import { PostgresRecordingStore } from '@toolhistory/persistence';
import type { RunningService } from '../bootstrap';
import { freshSchema, type FreshSchema } from '../../../../test/support/fresh-schema';
import { connectedProducer, freshTopic, publishEvents, readTopic, testKafka } from '../../../../test/support/kafka-fixtures';
import { countRows } from '../../../../test/support/read-model-queries';
import { startInProcess } from '../../../../test/support/service-harness';
import { uniqueName } from '../../../../test/support/test-environment';
import { runCompleted, toolCall, toolResult } from '../../../../test/support/tool-event-factory';
import { agentTraffic } from '../../../../test/support/traffic';
import { waitFor } from '../../../../test/support/wait-for';

/**
 * Failure paths that crashes and duplicates do not reach: each must end in a
 * dead letter with its reason while the partition moves on, never in a
 * partition retrying the same batch forever.
 */
describe('failure paths of recording (real Kafka, real PostgreSQL)', () => {
  let kafka: Kafka;
  let producer: Producer;
  let db: FreshSchema;
  let topic: string;
  let deadLetterTopic: string;
  let service: RunningService;

  beforeAll(async () => {
    kafka = testKafka();
    db = await freshSchema('failures');
    topic = uniqueName('failure-events').replace(/_/g, '-');
    deadLetterTopic = `${topic}.dlq`;
    const admin = kafka.admin();
    await admin.connect();
    // A dead-letter topic that takes no record over 2 KB, as a broker limit would refuse a large letter.
    await admin.createTopics({
      topics: [
        { topic, numPartitions: 1, replicationFactor: 1 },
        { topic: deadLetterTopic, numPartitions: 1, replicationFactor: 1, configEntries: [{ name: 'max.message.bytes', value: '2048' }] },
      ],
      waitForLeaders: true,
    });
    await admin.disconnect();
    producer = await connectedProducer(kafka);
    service = await startInProcess({ topic, schema: db.schema, groupId: uniqueName('g') });
  });

  afterAll(async () => {
    await service?.close();
    await producer?.disconnect();
    await db?.drop();
  });

  const send = (conversationId: string, values: string[]) =>
    producer.send({ topic, acks: -1, messages: values.map((value) => ({ key: conversationId, value })) });

  it('dead-letters deep nesting, an index beyond 32 bits, and a letter too large for the broker, recording their neighbours', async () => {
    const scope = { tenantId: 'acme', conversationId: uniqueName('conv'), runId: 'r1' };
    const call = toolCall(scope, { roundIndex: 0, sequenceIndex: 0, toolCallId: 'c0' });
    const result = toolResult(scope, { roundIndex: 0, sequenceIndex: 0, toolCallId: 'c0' });
    const done = runCompleted(scope, { finishReason: 'stop' });
    // About 60 KB of nesting, well inside the 1 MB event limit: it used to overflow the redaction walk inside
    // the batch transaction, which was retried forever.
    const deep = JSON.stringify(toolResult(scope, { roundIndex: 0, sequenceIndex: 1, toolCallId: 'c1', result: 'x' })).replace(
      '"result":"x"',
      `"result":${'['.repeat(30_000)}1${']'.repeat(30_000)}`,
    );
    const wideIndex = JSON.stringify(toolCall(scope, { roundIndex: 2_147_483_648, sequenceIndex: 0, toolCallId: 'c2' }));
    // Invalid (no tenant), and its letter is larger than the dead-letter topic takes.
    const large = JSON.stringify({
      ...toolCall(scope, { roundIndex: 0, sequenceIndex: 3 }),
      tenantId: '',
      arguments: { text: 'y'.repeat(8_000) },
    });
    await send(scope.conversationId, [JSON.stringify(call), deep, wideIndex, JSON.stringify(result), large, JSON.stringify(done)]);

    const letters = await readTopic(kafka, deadLetterTopic, 3);
    expect(
      letters.map((l) => [
        l.headers[DEAD_LETTER_HEADERS.errorCode],
        l.headers[DEAD_LETTER_HEADERS.reason],
        l.headers[DEAD_LETTER_HEADERS.stub],
      ]),
    ).toEqual([
      ['INVALID_EVENT', 'result must not nest deeper than 64 levels', undefined],
      ['INVALID_EVENT', 'roundIndex must be at most 2147483647', undefined],
      ['INVALID_EVENT', 'tenantId must not be empty', 'true'],
    ]);
    // The deep letter keeps its shape down to the walk's bound; the refused one is a stub of its origin and size.
    expect(letters[0].value).toContain('[REDACTED:nesting]');
    expect(JSON.parse(letters[2].value!)).toEqual({
      deadLetterStub: true,
      originalBytes: expect.any(Number),
      refused: `${deadLetterTopic} refused the dead letter (MESSAGE_TOO_LARGE)`,
    });
    expect(letters[2].headers[DEAD_LETTER_HEADERS.originalOffset]).toBe('4');
    await waitFor(
      () => countRows(db.pool, 'events'),
      (n) => n === 3,
      { what: 'the three valid neighbours recorded' },
    );

    // The partition moved on: a later event is recorded too.
    await send(scope.conversationId, [JSON.stringify(runCompleted({ ...scope, runId: 'r2' }))]);
    await waitFor(
      () => countRows(db.pool, 'events'),
      (n) => n === 4,
      { what: 'a later event recorded' },
    );
  });
});

describe('nothing skipped silently (real Kafka, real PostgreSQL)', () => {
  it('records the whole topic into a fresh database, though the consumer group already committed Kafka offsets at its end', async () => {
    const kafka = testKafka();
    const { topic } = await freshTopic(kafka, 3);
    const producer = await connectedProducer(kafka);
    const events = [...agentTraffic(600, { seed: 21 })];
    const unique = new Set(events.map((e) => e.eventId)).size;
    await publishEvents(producer, topic, events);
    await producer.disconnect();

    // Another deployment (or an earlier database) consumed the topic with this group and committed its end.
    const groupId = uniqueName('g');
    const earlier = kafka.consumer({ groupId });
    await earlier.connect();
    await earlier.subscribe({ topic, fromBeginning: true });
    let seen = 0;
    await new Promise<void>((done) => {
      void earlier.run({
        eachMessage: async () => {
          seen += 1;
          if (seen === events.length) done();
        },
      });
    });
    await earlier.disconnect();
    const admin = kafka.admin();
    await admin.connect();
    const committed = await admin.fetchOffsets({ groupId, topics: [topic] });
    await admin.disconnect();
    expect(committed[0].partitions.reduce((sum, p) => sum + Number(p.offset), 0)).toBe(events.length);

    const db = await freshSchema('skipnone');
    const service = await startInProcess({ topic, schema: db.schema, groupId });
    try {
      await waitFor(
        () => countRows(db.pool, 'events'),
        (n) => n === unique,
        { what: 'every event of the topic recorded', timeoutMs: 60_000 },
      );
    } finally {
      await service.close();
      await db.drop();
    }
  });
});

describe('a gap between the recorded offset and a batch (real PostgreSQL)', () => {
  it('is answered with where to resume, never recorded across', async () => {
    const db = await freshSchema('gap');
    const store = new PostgresRecordingStore(db.pool);
    const partition = { consumerGroup: 'g', topic: 't', partition: 0 };
    const scope = { tenantId: 'acme', conversationId: uniqueName('conv'), runId: 'r1' };
    try {
      await store.recordBatch({ ...partition, events: [], nextOffset: '5', firstOffset: '0' });
      await expect(
        store.recordBatch({ ...partition, events: [{ offset: '7', event: runCompleted(scope) }], nextOffset: '8', firstOffset: '7' }),
      ).resolves.toEqual({ kind: 'gap', resumeAt: '5' });
      expect(await countRows(db.pool, 'events')).toBe(0);
      // From the stored offset, or from before it (redelivery), recording goes on.
      await expect(
        store.recordBatch({ ...partition, events: [{ offset: '5', event: runCompleted(scope) }], nextOffset: '6', firstOffset: '3' }),
      ).resolves.toMatchObject({ appended: 1 });
    } finally {
      await db.drop();
    }
  });
});
