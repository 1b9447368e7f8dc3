import type { StoredToolEvent } from '../../libs/contract/src';
import {
  EventStore,
  isOffsetGap,
  OffsetEvent,
  parsePolicyDocument,
  RecordBatch,
  RecordBatchCommand,
  RecordBatchOutcome,
  RecordingStorage,
  StreamRef,
} from '../../libs/domain/src';
import { testTokens } from '../../libs/domain/src/projection/test-tokens.fixture';
import { uniqueName } from '../support/test-environment';
import { runCompleted, toolCall, toolResult } from '../support/tool-event-factory';

/**
 * The behaviour every RecordingStorage must give the recording service
 * (RecordBatch), as one suite each adapter runs: PostgreSQL for real in its
 * integration test, the EventStore-based storage on the in-memory model of
 * the EventStoreDB client and, when one is configured, on a real server.
 * Every test works in tenants, groups and topics of its own, so the suite
 * can share one store with other tests.
 */
export interface RecordingStorageHarness {
  storage: RecordingStorage;
  /** Reads back what a conversation's stream holds, as stored. */
  events: EventStore;
  /** Erases a conversation as the store's eraser does (its tombstone stays). */
  erase(stream: StreamRef): Promise<void>;
  close(): Promise<void>;
}

const parsed = parsePolicyDocument({ tools: { lookup_patient: { maskResult: ['$.diagnosis'] } } });
if (!parsed.ok) throw new Error(parsed.problems.join('\n'));
const redaction = parsed.policy.redaction;

export function describeRecordingStorageContract(adapter: string, open: () => Promise<RecordingStorageHarness>): void {
  describe(`RecordingStorage contract: ${adapter}`, () => {
    let harness: RecordingStorageHarness;
    let recorder: RecordBatch;

    beforeAll(async () => {
      harness = await open();
      recorder = new RecordBatch(harness.storage, { redaction, tokens: testTokens });
    });
    afterAll(() => harness?.close());

    /** A partition of its own, and a conversation in a tenant of its own. */
    function fixture() {
      const partition = { consumerGroup: uniqueName('group'), topic: uniqueName('topic'), partition: 3 };
      const stream: StreamRef = { tenantId: uniqueName('tenant'), conversationId: uniqueName('conv') };
      const scope = { ...stream, runId: uniqueName('run') };
      const command = (from: number, events: readonly StoredToolEvent[], extra: Partial<RecordBatchCommand> = {}): RecordBatchCommand => ({
        ...partition,
        events: events.map((event, i): OffsetEvent => ({ offset: String(from + i), event })),
        nextOffset: String(from + events.length),
        firstOffset: String(from),
        ...extra,
      });
      const committed = async () => (await recorder.committedOffsets(partition.consumerGroup, partition.topic)).get(partition.partition);
      const stored = async () => (await harness.events.readStream(stream)).map((r) => r.event);
      return { partition, stream, scope, command, committed, stored };
    }

    const recorded = async (command: RecordBatchCommand): Promise<RecordBatchOutcome> => {
      const outcome = await recorder.recordBatch(command);
      if (isOffsetGap(outcome)) throw new Error(`unexpected gap: resume at ${outcome.resumeAt}`);
      return outcome;
    };
    const ids = (events: readonly StoredToolEvent[]) => events.map((e) => e.eventId);

    it('records a batch, counts it by type and advances the partition’s offset', async () => {
      const { scope, command, committed, stored } = fixture();
      const events = [toolCall(scope, { roundIndex: 0, sequenceIndex: 0 }), toolResult(scope, { roundIndex: 0, sequenceIndex: 0 })];
      expect(await committed()).toBeUndefined();
      expect(await recorded(command(0, events))).toEqual({
        appended: 2,
        duplicates: 0,
        alreadyCommitted: 0,
        erased: 0,
        recorded: { byType: { ToolCallRequested: 1, ToolResultReceived: 1 }, redactions: {} },
      });
      expect(ids(await stored())).toEqual(ids(events));
      expect(await committed()).toBe('2');
    });

    it('records batches of several partitions in one unit: each partition its events, its offset and its outcome', async () => {
      const [one, two] = [fixture(), fixture()];
      const other = { ...two.partition, partition: 4 };
      const first = [toolCall(one.scope, { roundIndex: 0, sequenceIndex: 0 }), toolResult(one.scope, { roundIndex: 0, sequenceIndex: 0 })];
      const second = [toolCall(two.scope, { roundIndex: 0, sequenceIndex: 0 })];
      await recorded(two.command(0, second.slice(0, 1)));
      const more = toolCall(two.scope, { roundIndex: 1, sequenceIndex: 0 });
      const outcomes = await recorder.recordBatches([
        one.command(0, first),
        two.command(0, [...second, more]),
        { ...other, events: [], nextOffset: '7', firstOffset: '0' },
      ]);
      expect(outcomes).toEqual([
        expect.objectContaining({ appended: 2, duplicates: 0, alreadyCommitted: 0 }),
        expect.objectContaining({ appended: 1, duplicates: 0, alreadyCommitted: 1 }),
        expect.objectContaining({ appended: 0, alreadyCommitted: 0 }),
      ]);
      expect(ids(await one.stored())).toEqual(ids(first));
      expect(ids(await two.stored())).toEqual(ids([...second, more]));
      expect([await one.committed(), await two.committed()]).toEqual(['2', '2']);
      expect((await recorder.committedOffsets(other.consumerGroup, other.topic)).get(4)).toBe('7');
    });

    it('records a batch once across a redelivery: what lies below the stored offset is already committed', async () => {
      const { scope, command, committed, stored } = fixture();
      const events = [toolCall(scope, { roundIndex: 0, sequenceIndex: 0 }), runCompleted(scope)];
      await recorded(command(0, events));
      expect(await recorded(command(0, events))).toMatchObject({ appended: 0, duplicates: 0, alreadyCommitted: 2, erased: 0 });
      // Redelivered with one message beyond: only that one is new.
      const more = [...events, toolCall(scope, { roundIndex: 1, sequenceIndex: 0 })];
      expect(await recorded(command(0, more))).toMatchObject({ appended: 1, alreadyCommitted: 2 });
      expect(ids(await stored())).toEqual(ids(more));
      expect(await committed()).toBe('3');
    });

    it('records an eventId once: repeats from producers, in a later batch or the same one, are counted as duplicates', async () => {
      const { scope, command, stored } = fixture();
      const [a, b, c] = [0, 1, 2].map((i) => toolCall(scope, { roundIndex: 0, sequenceIndex: i }));
      await recorded(command(0, [a, b]));
      const outcome = await recorded(command(2, [b, c, c]));
      expect(outcome).toMatchObject({ appended: 1, duplicates: 2, alreadyCommitted: 0, erased: 0 });
      expect(outcome.recorded.byType).toEqual({ ToolCallRequested: 1 });
      expect(ids(await stored())).toEqual(ids([a, b, c]));
    });

    it('answers a gap when a batch starts beyond the stored offset, and records nothing of it', async () => {
      const { scope, command, committed, stored } = fixture();
      const first = [toolCall(scope, { roundIndex: 0, sequenceIndex: 0 })];
      await recorded(command(0, first));
      const beyond = [toolCall(scope, { roundIndex: 0, sequenceIndex: 1 })];
      expect(await recorder.recordBatch(command(5, beyond))).toEqual({ kind: 'gap', resumeAt: '1' });
      expect(ids(await stored())).toEqual(ids(first));
      expect(await committed()).toBe('1');
    });

    it('records a partition’s first batch from wherever it starts', async () => {
      const { scope, command, committed } = fixture();
      expect(await recorded(command(40, [runCompleted(scope)]))).toMatchObject({ appended: 1 });
      expect(await committed()).toBe('41');
    });

    it('moves the offset for a batch without valid events, and never back', async () => {
      const { command, committed } = fixture();
      expect(await recorded(command(0, [], { nextOffset: '9', firstOffset: '0' }))).toMatchObject({ appended: 0, alreadyCommitted: 0 });
      expect(await committed()).toBe('9');
      expect(await recorded(command(0, [], { nextOffset: '5', firstOffset: undefined }))).toMatchObject({ appended: 0 });
      expect(await committed()).toBe('9');
    });

    it('drops the events of an erased conversation, also when they are delivered again, and the offset moves on', async () => {
      const { stream, scope, command, committed, stored } = fixture();
      const events = [toolCall(scope, { roundIndex: 0, sequenceIndex: 0 }), toolResult(scope, { roundIndex: 0, sequenceIndex: 0 })];
      await recorded(command(0, events));
      await harness.erase(stream);
      const late = toolCall(scope, { roundIndex: 1, sequenceIndex: 0 });
      expect(await recorded(command(2, [...events, late]))).toMatchObject({ appended: 0, duplicates: 0, erased: 3 });
      expect(await stored()).toEqual([]);
      expect(await committed()).toBe('5');

      // Another conversation in the same batch is recorded as usual.
      const other = { ...scope, conversationId: uniqueName('conv') };
      const kept = toolCall(other, { roundIndex: 0, sequenceIndex: 0 });
      expect(await recorded(command(5, [toolCall(scope, { roundIndex: 2, sequenceIndex: 0 }), kept]))).toMatchObject({
        appended: 1,
        erased: 1,
      });
      expect(ids((await harness.events.readStream(other)).map((r) => r.event))).toEqual([kept.eventId]);
    });

    it('redacts before anything rests: detectors everywhere, a result by the rule of its call, recorded before or in the batch', async () => {
      const { scope, command, stored } = fixture();
      const call = toolCall(scope, {
        roundIndex: 0,
        sequenceIndex: 0,
        toolName: 'lookup_patient',
        arguments: { email: 'pat@example.org' },
      });
      const first = await recorded(command(0, [call]));
      expect(first.recorded.redactions).toEqual({ email: 1 });
      // The call came in an earlier batch: the tool's mask still applies to its result.
      const result = toolResult(scope, {
        roundIndex: 0,
        sequenceIndex: 0,
        result: { diagnosis: 'influenza-b', contact: 'pat@example.org' },
      });
      const sameBatchCall = toolCall(scope, { roundIndex: 0, sequenceIndex: 1, toolName: 'lookup_patient' });
      const sameBatchResult = toolResult(scope, { roundIndex: 0, sequenceIndex: 1, result: { diagnosis: 'bronchitis' } });
      const second = await recorded(command(1, [result, sameBatchCall, sameBatchResult]));
      expect(second.recorded.redactions).toEqual({ email: 1, json_path: 2 });
      const [storedCall, storedResult, , storedSameBatchResult] = await stored();
      expect(storedCall).toMatchObject({ arguments: { email: '[REDACTED:email]' }, redaction: { counts: { email: 1 } } });
      expect(storedResult).toMatchObject({
        result: { diagnosis: '[REDACTED:$.diagnosis]', contact: '[REDACTED:email]' },
        redaction: { persist: 'full', counts: { email: 1, '$.diagnosis': 1 } },
      });
      expect(storedSameBatchResult).toMatchObject({ result: { diagnosis: '[REDACTED:$.diagnosis]' } });
      expect(JSON.stringify(await stored())).not.toMatch(/pat@example\.org|influenza|bronchitis/);
    });

    it('keeps each event’s trace context beside it, not in its payload', async () => {
      const { stream, scope, partition } = fixture();
      const traceparent = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';
      const [traced, untraced] = [toolCall(scope, { roundIndex: 0, sequenceIndex: 0 }), runCompleted(scope)];
      await recorded({
        ...partition,
        events: [
          { offset: '0', event: traced, traceparent },
          { offset: '1', event: untraced },
        ],
        nextOffset: '2',
      });
      const read = await harness.events.readStream(stream);
      expect(read.map((r) => r.traceparent)).toEqual([traceparent, undefined]);
      expect(JSON.stringify(read.map((r) => r.event))).not.toContain(traceparent);
    });
  });
}
