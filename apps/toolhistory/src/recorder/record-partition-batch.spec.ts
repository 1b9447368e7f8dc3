import {
  type DeadLetter,
  type DeadLetterSink,
  parsePolicyDocument,
  type RecordBatchCommand,
  type RecordingStore,
  summarizeRecorded,
} from '@toolhistory/domain';
import { AppError, ErrorCode } from '@toolhistory/errors';
import { runCompleted, toolCall } from '../../../../test/support/tool-event-factory';
import { IncomingMessage, RecordPartitionBatch } from './record-partition-batch';

const scope = { tenantId: 't', conversationId: 'c', runId: 'r' };

class FakeStore implements RecordingStore {
  readonly commands: RecordBatchCommand[] = [];
  /** Each partition's next offset to record, as the batches left it. */
  readonly committed = new Map<number, string>();
  constructor(private readonly unstorableEventIds: Set<string> = new Set()) {}
  async recordBatch(command: RecordBatchCommand) {
    if (command.events.some((e) => this.unstorableEventIds.has(e.event.eventId))) {
      throw new AppError(ErrorCode.UnstorableEvent, 'PostgreSQL rejected the data (22P05)');
    }
    this.commands.push(command);
    this.committed.set(command.partition, command.nextOffset);
    return {
      appended: command.events.length,
      duplicates: 0,
      alreadyCommitted: 0,
      erased: 0,
      recorded: summarizeRecorded(command.events.map((e) => e.event)),
    };
  }
  async committedOffsets() {
    return new Map(this.committed);
  }
}

class FakeSink implements DeadLetterSink {
  readonly letters: DeadLetter[] = [];
  /** Refuses, for what it is, any letter whose value is larger than this. */
  constructor(private readonly maxValueBytes = Number.POSITIVE_INFINITY) {}
  async publish(letters: readonly DeadLetter[]) {
    if (letters.some((l) => (l.value?.length ?? 0) > this.maxValueBytes)) {
      throw new AppError(ErrorCode.BrokerRejected, 'events.dlq refused the dead letter (MESSAGE_TOO_LARGE)');
    }
    this.letters.push(...letters);
  }
}

/** A store that fails, as `failure` says, for the events it names (and otherwise records). */
class FailingStore extends FakeStore {
  readonly attempts = new Map<string, number>();
  constructor(private readonly failure: (eventIds: string[], attempt: number) => Error | undefined) {
    super();
  }
  override async recordBatch(command: RecordBatchCommand) {
    const ids = command.events.map((e) => e.event.eventId);
    const key = ids.join(',');
    const attempt = (this.attempts.get(key) ?? 0) + 1;
    this.attempts.set(key, attempt);
    const error = this.failure(ids, attempt);
    if (error) throw error;
    return super.recordBatch(command);
  }
}

const message = (offset: number, value: unknown): IncomingMessage => ({
  offset: String(offset),
  key: Buffer.from('c'),
  value: Buffer.from(typeof value === 'string' ? value : JSON.stringify(value)),
  timestamp: '1700000000000',
});

describe('RecordPartitionBatch', () => {
  const options = { consumerGroup: 'g', maxEventBytes: 10_000 };

  it('does not dead-letter a poison message again when its batch is delivered again after it was recorded', async () => {
    const store = new FakeStore();
    const sink = new FakeSink();
    const recorder = new RecordPartitionBatch(store, sink, options);
    const batch = {
      topic: 'events',
      partition: 0,
      messages: [message(5, toolCall(scope, { roundIndex: 0, sequenceIndex: 0 })), message(6, 'not json')],
    };
    await recorder.execute(batch);
    const again = await recorder.execute(batch); // a rebalance, or the seek back to where recording stopped
    expect(sink.letters.map((l) => l.offset)).toEqual(['6']);
    expect(again).toMatchObject({ deadLettered: 0, deadLetterCodes: [] });
    // Past the recorded offset, a poison message is dead-lettered as ever.
    await recorder.execute({ ...batch, messages: [message(7, 'not json either')] });
    expect(sink.letters.map((l) => l.offset)).toEqual(['6', '7']);
  });

  it('dead-letters poison messages and records their valid neighbours with the next offset', async () => {
    const store = new FakeStore();
    const sink = new FakeSink();
    const good1 = toolCall(scope, { roundIndex: 0, sequenceIndex: 0 });
    const good2 = runCompleted(scope);
    const outcome = await new RecordPartitionBatch(store, sink, options).execute({
      topic: 'events',
      partition: 2,
      messages: [message(10, good1), message(11, 'not json'), message(12, { ...good2, schemaVersion: 7 }), message(13, good2)],
    });
    expect(outcome).toEqual({
      appended: 2,
      duplicates: 0,
      alreadyCommitted: 0,
      erased: 0,
      recorded: { byType: { ToolCallRequested: 1, RunCompleted: 1 }, redactions: {} },
      deadLettered: 2,
      deadLetterCodes: [ErrorCode.NotJson, ErrorCode.UnsupportedSchemaVersion],
      isolated: [],
      stubs: 0,
    });
    expect(store.commands).toHaveLength(1);
    expect(store.commands[0]).toMatchObject({ consumerGroup: 'g', topic: 'events', partition: 2, nextOffset: '14' });
    expect(store.commands[0].events.map((e) => e.offset)).toEqual(['10', '13']);
    expect(sink.letters.map((l) => [l.offset, l.errorCode])).toEqual([
      ['11', ErrorCode.NotJson],
      ['12', ErrorCode.UnsupportedSchemaVersion],
    ]);
    expect(sink.letters[1].reason).toMatch(/schemaVersion: 7 is not supported/);
  });

  it('redacts what it dead-letters: detectors over a JSON value, only the size of anything else', async () => {
    const sink = new FakeSink();
    const leaky = { ...toolCall(scope, { roundIndex: 0, sequenceIndex: 0 }), arguments: { to: 'ann.lee@example.org' }, schemaVersion: 9 };
    await new RecordPartitionBatch(new FakeStore(), sink, options).execute({
      topic: 'events',
      partition: 0,
      messages: [message(0, leaky), message(1, '{"key": "sk-proj-Zq8RkT2mWvX4nY7pLs3Bd9Hc" oops')],
    });
    const [json, text] = sink.letters.map((l) => l.value!.toString());
    expect(json).not.toContain('ann.lee@example.org');
    expect(JSON.parse(json)).toMatchObject({ arguments: { to: '[REDACTED:email]' }, schemaVersion: 9 });
    expect(JSON.parse(text)).toEqual({ unparseable: true, originalBytes: 47 });
    expect(sink.letters[1].reason).not.toContain('sk-proj');
  });

  it('falls back to one event at a time when the store rejects the data, dead-lettering only the culprit', async () => {
    const bad = toolCall(scope, { roundIndex: 0, sequenceIndex: 1 });
    const store = new FakeStore(new Set([bad.eventId]));
    const sink = new FakeSink();
    const outcome = await new RecordPartitionBatch(store, sink, options).execute({
      topic: 'events',
      partition: 0,
      messages: [message(0, toolCall(scope, { roundIndex: 0, sequenceIndex: 0 })), message(1, bad), message(2, runCompleted(scope))],
    });
    expect(outcome).toMatchObject({ appended: 2, deadLettered: 1 });
    expect(sink.letters.map((l) => [l.offset, l.errorCode])).toEqual([['1', ErrorCode.UnstorableEvent]]);
    // One by one: the good event, the probe at the culprit's own offset, the move past it, the next event, the batch's end.
    expect(store.commands.map((c) => [c.nextOffset, c.events.length])).toEqual([
      ['1', 1],
      ['1', 0],
      ['2', 0],
      ['3', 1],
      ['3', 0],
    ]);
  });

  it('lets a retriable store failure through to the caller, dead-lettering nothing for it', async () => {
    const store: RecordingStore = {
      recordBatch: async () => {
        throw new AppError(ErrorCode.StorageUnavailable, 'down');
      },
      committedOffsets: async () => new Map(),
    };
    const sink = new FakeSink();
    await expect(
      new RecordPartitionBatch(store, sink, options).execute({ topic: 'e', partition: 0, messages: [message(0, runCompleted(scope))] }),
    ).rejects.toMatchObject({ retriable: true });
    expect(sink.letters).toHaveLength(0);
  });

  it('sets aside a valid event our own code fails on (a stack overflow, a TypeError), dead-lettering it with its reason', async () => {
    const bad = toolCall(scope, { roundIndex: 0, sequenceIndex: 1 });
    const store = new FailingStore((ids) => (ids.includes(bad.eventId) ? new RangeError('Maximum call stack size exceeded') : undefined));
    const sink = new FakeSink();
    const outcome = await new RecordPartitionBatch(store, sink, options).execute({
      topic: 'events',
      partition: 0,
      messages: [message(0, toolCall(scope, { roundIndex: 0, sequenceIndex: 0 })), message(1, bad), message(2, runCompleted(scope))],
    });
    expect(outcome).toMatchObject({
      appended: 2,
      deadLettered: 1,
      isolated: [{ offset: '1', errorCode: ErrorCode.Internal, reason: 'Maximum call stack size exceeded' }],
    });
    expect(store.attempts.get(bad.eventId)).toBe(3);
    expect(sink.letters.map((l) => [l.offset, l.errorCode, l.reason])).toEqual([
      ['1', ErrorCode.Internal, 'Maximum call stack size exceeded'],
    ]);
  });

  it('records an event that fails once and then succeeds, setting nothing aside', async () => {
    const flaky = toolCall(scope, { roundIndex: 0, sequenceIndex: 0 });
    const store = new FailingStore((ids, attempt) => (ids.includes(flaky.eventId) && attempt === 1 ? new TypeError('once') : undefined));
    const sink = new FakeSink();
    const outcome = await new RecordPartitionBatch(store, sink, options).execute({
      topic: 'e',
      partition: 0,
      messages: [message(0, flaky)],
    });
    expect(outcome).toMatchObject({ appended: 1, deadLettered: 0, isolated: [] });
    expect(sink.letters).toHaveLength(0);
  });

  it('dead-letters nothing when recording fails whatever the event: the batch is retried instead', async () => {
    const store = new FailingStore(() => new TypeError('a fault of the store, not of any event'));
    const sink = new FakeSink();
    await expect(
      new RecordPartitionBatch(store, sink, options).execute({
        topic: 'e',
        partition: 0,
        messages: [message(0, runCompleted(scope)), message(1, runCompleted(scope))],
      }),
    ).rejects.toMatchObject({ retriable: true, message: expect.stringMatching(/^recording fails whatever the event/) });
    expect(sink.letters).toHaveLength(0);
  });

  it('publishes a stub for a dead letter the broker refuses, so the partition moves on', async () => {
    const huge = { ...toolCall(scope, { roundIndex: 0, sequenceIndex: 0 }), tenantId: '', arguments: { text: 'x'.repeat(5_000) } };
    const sink = new FakeSink(2_000);
    const store = new FakeStore();
    const good = runCompleted(scope);
    const outcome = await new RecordPartitionBatch(store, sink, options).execute({
      topic: 'events',
      partition: 0,
      messages: [message(7, huge), message(8, good)],
    });
    expect(outcome).toMatchObject({ appended: 1, deadLettered: 1, stubs: 1 });
    expect(sink.letters).toHaveLength(1);
    const [stub] = sink.letters;
    expect(stub).toMatchObject({ offset: '7', errorCode: ErrorCode.InvalidEvent, stub: true, reason: 'tenantId must not be empty' });
    expect(JSON.parse(stub.value!.toString())).toEqual({
      deadLetterStub: true,
      originalBytes: expect.any(Number),
      refused: 'events.dlq refused the dead letter (MESSAGE_TOO_LARGE)',
    });
  });

  it('retries (never skips) when even the stub is refused, or when the broker is unreachable', async () => {
    const huge = { ...runCompleted(scope), tenantId: '', finishReason: 'y'.repeat(300) };
    const refusesAll = new FakeSink(10);
    await expect(
      new RecordPartitionBatch(new FakeStore(), refusesAll, options).execute({ topic: 'e', partition: 0, messages: [message(0, huge)] }),
    ).rejects.toMatchObject({ retriable: true, message: expect.stringMatching(/refuses even a stub letter/) });
    const unreachable: DeadLetterSink = {
      publish: async () => {
        throw new AppError(ErrorCode.BrokerUnavailable, 'no broker');
      },
    };
    const store = new FakeStore();
    await expect(
      new RecordPartitionBatch(store, unreachable, options).execute({ topic: 'e', partition: 0, messages: [message(0, huge)] }),
    ).rejects.toMatchObject({ retriable: true, message: 'no broker' });
    expect(store.commands).toHaveLength(0);
  });

  it("applies the tool's masks and persist rule to a dead letter, the default rule to a result", async () => {
    const parsed = parsePolicyDocument({
      defaults: { maskResult: ['$.card'] },
      tools: { charge_card: { maskArguments: ['$.card.cvc'] }, read_record: { persist: 'none' } },
    });
    if (!parsed.ok) throw new Error(parsed.problems.join('; '));
    const sink = new FakeSink();
    const poison = (fields: object) => ({ ...toolCall(scope, { roundIndex: 0, sequenceIndex: 0 }), schemaVersion: 9, ...fields });
    await new RecordPartitionBatch(new FakeStore(), sink, { ...options, redaction: parsed.policy.redaction }).execute({
      topic: 'e',
      partition: 0,
      messages: [
        message(0, poison({ toolName: 'charge_card', arguments: { card: { cvc: '123', brand: 'visa' } } })),
        message(1, poison({ toolName: 'read_record', arguments: { diagnosis: 'confidential' } })),
        message(2, { ...runCompleted(scope), type: 'ToolResultReceived', schemaVersion: 9, result: { card: { number: 'x' }, ok: true } }),
      ],
    });
    const [masked, dropped, result] = sink.letters.map((l) => JSON.parse(l.value!.toString()));
    expect(masked.arguments).toEqual({ card: { cvc: '[REDACTED:$.card.cvc]', brand: 'visa' } });
    expect(dropped.arguments).toBe('[REDACTED:persist]');
    expect(JSON.stringify(dropped)).not.toContain('confidential');
    expect(result.result).toEqual({ card: '[REDACTED:$.card]', ok: true });
  });
});
