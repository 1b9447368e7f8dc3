import type { StoredToolEvent } from '@toolhistory/contract';
import { runCompleted, toolCall, toolResult } from '../../../../test/support/tool-event-factory';
import { parsePolicyDocument } from '../policy/tool-history-policy';
import type { ReadModelState } from '../projection/evolve-read-model';
import type { OffsetEvent, PartitionRef, RecordBatchCommand } from '../ports/recording-store.port';
import type { AppendedEvents, RecordedBefore, RecordingStorage, RecordingUnit } from '../ports/recording-unit.port';
import { testTokens } from '../projection/test-tokens.fixture';
import { RecordBatch } from './record-batch';

const parsed = parsePolicyDocument({ tools: { lookup_patient: { maskResult: ['$.diagnosis'] } } });
if (!parsed.ok) throw new Error(parsed.problems.join('\n'));
const rules = { redaction: parsed.policy.redaction, tokens: testTokens };
const scope = { tenantId: 't', conversationId: 'c', runId: 'r' };

/** A unit that notes each step it is asked for, and a storage that runs one per batch. */
class NotingStorage implements RecordingStorage {
  readonly steps: string[] = [];
  appended: StoredToolEvent[] = [];
  constructor(
    /** The stored next offset: of every partition, or per partition. */
    private readonly stored: bigint | ReadonlyMap<number, bigint>,
    readonly options: { recorded?: Set<string>; erased?: Set<string>; readModel?: boolean } = {},
  ) {}

  async inUnitOfWork<T>(partitions: readonly PartitionRef[], work: (unit: RecordingUnit) => Promise<T>): Promise<T> {
    const { steps, options } = this;
    const state: ReadModelState = { conversations: new Map(), runs: new Map(), invocations: new Map() };
    const unit: RecordingUnit = {
      storedOffset: async (partition) => {
        steps.push(partitions.length > 1 ? `storedOffset ${partition.partition}` : 'storedOffset');
        return typeof this.stored === 'bigint' ? this.stored : (this.stored.get(partition.partition) ?? -1n);
      },
      // What rests apart is reasoning-apart.spec.ts's subject; the order of the other steps is this file's.
      keepReasoning: async () => undefined,
      withoutRecorded: async (events) => (steps.push('withoutRecorded'), events.filter((m) => !options.recorded?.has(m.event.eventId))),
      openStreams: async (events) => {
        steps.push('openStreams');
        const open = events.filter((m) => !options.erased?.has(m.event.conversationId));
        return { open, erased: events.length - open.length };
      },
      recordedBefore: async (): Promise<RecordedBefore> => {
        steps.push('recordedBefore');
        if (!options.readModel) return { toolNames: {} };
        const readModel = {
          state,
          storedEvents: async () => (steps.push('storedEvents'), []),
          rewrite: async () => void steps.push('rewrite'),
          write: async () => void steps.push('write'),
        };
        return { toolNames: { rows: state.invocations.values() }, readModel };
      },
      advance: async (partition, nextOffset) =>
        void steps.push(partitions.length > 1 ? `advance ${partition.partition} ${nextOffset}` : `advance ${nextOffset}`),
      append: async (events: readonly OffsetEvent[]): Promise<AppendedEvents> => {
        steps.push('append');
        this.appended = events.map((m) => m.event);
        return { written: this.appended, duplicates: 0, erased: 0 };
      },
    };
    steps.push(`unit ${partitions.map((p) => p.partition).join(' ')}`);
    return work(unit);
  }

  async committedOffsets() {
    return new Map();
  }
}

const command = (from: number, events: StoredToolEvent[], firstOffset?: string, partition = 1): RecordBatchCommand => ({
  consumerGroup: 'g',
  topic: 't',
  partition,
  events: events.map((event, i) => ({ offset: String(from + i), event })),
  nextOffset: String(from + events.length),
  firstOffset,
});

describe('RecordBatch, the recording service', () => {
  it('decides offsets, dedupes, opens the streams, redacts, projects, advances and appends, in that order', async () => {
    const storage = new NotingStorage(0n, { readModel: true });
    const call = toolCall(scope, { roundIndex: 0, sequenceIndex: 0, toolName: 'lookup_patient' });
    const result = toolResult(scope, { roundIndex: 0, sequenceIndex: 0, result: { diagnosis: 'influenza-b' } });
    const outcome = await new RecordBatch(storage, rules).recordBatch(command(0, [call, result]));
    expect(storage.steps).toEqual([
      'unit 1',
      'storedOffset',
      'withoutRecorded',
      'openStreams',
      'recordedBefore',
      'write',
      'advance 2',
      'append',
    ]);
    expect(storage.appended[1]).toMatchObject({ result: { diagnosis: '[REDACTED:$.diagnosis]' } });
    expect(outcome).toMatchObject({ appended: 2, duplicates: 0, erased: 0, alreadyCommitted: 0 });
  });

  it('projects nothing when the read model follows the store', async () => {
    const storage = new NotingStorage(0n);
    await new RecordBatch(storage, rules).recordBatch(command(0, [toolCall(scope, { roundIndex: 0, sequenceIndex: 0 })]));
    expect(storage.steps).toEqual(['unit 1', 'storedOffset', 'withoutRecorded', 'openStreams', 'recordedBefore', 'advance 1', 'append']);
  });

  it('answers a gap, or an up-to-date batch, after reading the stored offset only', async () => {
    const gap = new NotingStorage(3n);
    expect(await new RecordBatch(gap, rules).recordBatch(command(5, [toolCall(scope, { roundIndex: 0, sequenceIndex: 0 })], '5'))).toEqual({
      kind: 'gap',
      resumeAt: '3',
    });
    expect(gap.steps).toEqual(['unit 1', 'storedOffset']);
    const upToDate = new NotingStorage(9n);
    expect(await new RecordBatch(upToDate, rules).recordBatch(command(0, [runCompleted(scope)]))).toMatchObject({ alreadyCommitted: 1 });
    expect(upToDate.steps).toEqual(['unit 1', 'storedOffset']);
  });

  it('opens, redacts and projects nothing when every event was recorded before, and still advances', async () => {
    const call = toolCall(scope, { roundIndex: 0, sequenceIndex: 0 });
    const storage = new NotingStorage(0n, { recorded: new Set([call.eventId]), readModel: true });
    const outcome = await new RecordBatch(storage, rules).recordBatch(command(0, [call]));
    expect(storage.steps).toEqual(['unit 1', 'storedOffset', 'withoutRecorded', 'advance 1', 'append']);
    expect(outcome).toMatchObject({ appended: 0, duplicates: 1 });
  });

  it('counts the events of erased conversations and redacts only the others', async () => {
    const storage = new NotingStorage(0n, { erased: new Set(['gone']) });
    const gone = toolCall({ ...scope, conversationId: 'gone' }, { roundIndex: 0, sequenceIndex: 0 });
    const kept = toolCall(scope, { roundIndex: 0, sequenceIndex: 0 });
    const outcome = await new RecordBatch(storage, rules).recordBatch(command(0, [gone, kept]));
    expect(outcome).toMatchObject({ appended: 1, erased: 1 });
    expect(storage.appended.map((e) => e.eventId)).toEqual([kept.eventId]);
  });

  describe('several partitions in one unit', () => {
    const other = { ...scope, conversationId: 'c2' };

    it('takes the offset rows in partition order, then each step once for every batch, and advances each partition', async () => {
      const storage = new NotingStorage(0n, { readModel: true });
      const first = toolCall(scope, { roundIndex: 0, sequenceIndex: 0 });
      const second = toolCall(other, { roundIndex: 0, sequenceIndex: 0 });
      const outcomes = await new RecordBatch(storage, rules).recordBatches([
        command(0, [second], undefined, 5),
        command(0, [first], undefined, 2),
      ]);
      expect(storage.steps).toEqual([
        'unit 5 2',
        'storedOffset 2',
        'storedOffset 5',
        'withoutRecorded',
        'openStreams',
        'recordedBefore',
        'write',
        'advance 5 1',
        'advance 2 1',
        'append',
      ]);
      expect(storage.appended.map((e) => e.eventId)).toEqual([second.eventId, first.eventId]);
      expect(outcomes).toEqual([
        expect.objectContaining({ appended: 1, duplicates: 0, erased: 0 }),
        expect.objectContaining({ appended: 1, duplicates: 0, erased: 0 }),
      ]);
    });

    it('gives each batch the outcome it would get alone: its duplicates, erased events, gap or nothing to do', async () => {
      const recordedBefore = toolCall(scope, { roundIndex: 0, sequenceIndex: 0 });
      const gone = toolCall({ ...scope, conversationId: 'gone' }, { roundIndex: 0, sequenceIndex: 0 });
      const kept = toolCall(other, { roundIndex: 0, sequenceIndex: 1 });
      const stored = new Map([
        [1, 0n],
        [2, 0n],
        [3, 4n],
        [4, 9n],
      ]);
      const options = { recorded: new Set([recordedBefore.eventId]), erased: new Set(['gone']) };
      const storage = new NotingStorage(stored, options);
      const batches = [
        command(0, [recordedBefore, kept], undefined, 1),
        command(0, [gone], undefined, 2),
        command(6, [runCompleted(scope)], '6', 3),
        command(0, [runCompleted(other)], undefined, 4),
      ];
      const alone = await Promise.all(batches.map((b) => new RecordBatch(new NotingStorage(stored, options), rules).recordBatch(b)));
      expect(await new RecordBatch(storage, rules).recordBatches(batches)).toEqual(alone);
      expect(alone).toEqual([
        expect.objectContaining({ appended: 1, duplicates: 1 }),
        expect.objectContaining({ appended: 0, erased: 1 }),
        { kind: 'gap', resumeAt: '4' },
        expect.objectContaining({ appended: 0, alreadyCommitted: 1 }),
      ]);
      expect(storage.appended.map((e) => e.eventId)).toEqual([kept.eventId]);
    });

    it('refuses a unit that names a partition twice', () => {
      const batch = command(0, [runCompleted(scope)]);
      expect(() => new RecordBatch(new NotingStorage(0n), rules).recordBatches([batch, batch])).toThrow('one batch of each partition');
    });
  });
});
