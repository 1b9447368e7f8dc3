import type { DeadLetter, DeadLetterSink, RecordBatchCommand, RecordingStore } from '@toolhistory/domain';
import { AppError, ErrorCode } from '@toolhistory/errors';
import { runCompleted, toolCall } from '../../../../test/support/tool-event-factory';
import { IncomingMessage, RecordPartitionBatch } from './record-partition-batch';

const scope = { tenantId: 't', conversationId: 'c', runId: 'r' };

class FakeStore implements RecordingStore {
  readonly commands: RecordBatchCommand[] = [];
  constructor(private readonly unstorableEventIds: Set<string> = new Set()) {}
  async recordBatch(command: RecordBatchCommand) {
    if (command.events.some((e) => this.unstorableEventIds.has(e.event.eventId))) {
      throw new AppError(ErrorCode.UnstorableEvent, 'PostgreSQL rejected the data (22P05)');
    }
    this.commands.push(command);
    return { appended: command.events.length, duplicates: 0, alreadyCommitted: 0, erased: 0 };
  }
  async committedOffsets() {
    return new Map();
  }
}

class FakeSink implements DeadLetterSink {
  readonly letters: DeadLetter[] = [];
  async publish(letters: readonly DeadLetter[]) {
    this.letters.push(...letters);
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
    expect(outcome).toEqual({ appended: 2, duplicates: 0, alreadyCommitted: 0, erased: 0, deadLettered: 2 });
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
    expect(store.commands.map((c) => c.nextOffset)).toEqual(['1', '2', '3', '3']);
  });

  it('lets a retriable store failure through to the caller, dead-lettering nothing for it', async () => {
    const store: RecordingStore = {
      recordBatch: async () => {
        throw new AppError(ErrorCode.StorageUnavailable, 'down', { retriable: true });
      },
      committedOffsets: async () => new Map(),
    };
    const sink = new FakeSink();
    await expect(
      new RecordPartitionBatch(store, sink, options).execute({ topic: 'e', partition: 0, messages: [message(0, runCompleted(scope))] }),
    ).rejects.toMatchObject({ retriable: true });
    expect(sink.letters).toHaveLength(0);
  });
});
