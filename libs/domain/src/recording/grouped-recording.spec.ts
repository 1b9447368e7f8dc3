import fc from 'fast-check';
import type { OffsetGap, RecordBatchCommand, RecordBatchOutcome } from '../ports/recording-store.port';
import { emptySummary } from './recorded-summary';
import { type BatchRecorder, GroupedRecording } from './grouped-recording';

/** A recorder whose units finish when the test says, noting what each held; a batch of partition 13 is poison. */
class GatedRecorder implements BatchRecorder {
  readonly units: number[][] = [];
  private gates: Array<() => void> = [];
  failWhole = false;

  private unit(commands: readonly RecordBatchCommand[]): Promise<void> {
    this.units.push(commands.map((c) => c.partition));
    return new Promise((resolve) => this.gates.push(resolve));
  }

  /** Lets the unit in flight finish. */
  finish(): void {
    this.gates.shift()?.();
  }

  async recordBatch(command: RecordBatchCommand): Promise<RecordBatchOutcome | OffsetGap> {
    await this.unit([command]);
    if (command.partition === 13 || this.failWhole) throw new Error(`partition ${command.partition} failed`);
    return outcomeOf(command);
  }

  async recordBatches(commands: readonly RecordBatchCommand[]): Promise<Array<RecordBatchOutcome | OffsetGap>> {
    await this.unit(commands);
    if (commands.some((c) => c.partition === 13) || this.failWhole) throw new Error('the unit failed');
    return commands.map(outcomeOf);
  }

  async committedOffsets() {
    return new Map();
  }
}

const outcomeOf = (c: RecordBatchCommand): RecordBatchOutcome => ({
  appended: c.events.length,
  duplicates: c.partition,
  alreadyCommitted: 0,
  erased: 0,
  recorded: emptySummary(),
});

const batch = (partition: number, events = 1): RecordBatchCommand => ({
  consumerGroup: 'g',
  topic: 't',
  partition,
  nextOffset: String(events),
  events: Array.from({ length: events }, () => ({ offset: '0', event: {} as never })),
});

const nextTurn = () => new Promise((resolve) => setImmediate(resolve));

/** Lets the event loop turn until the recorder has `units` units (the grouped recording starts them asynchronously). */
async function untilUnits(recorder: GatedRecorder, units: number): Promise<void> {
  for (let i = 0; i < 100 && recorder.units.length < units; i += 1) await nextTurn();
  expect(recorder.units).toHaveLength(units);
}

describe('GroupedRecording', () => {
  it('starts the batches of one turn of the event loop together, and records those that came meanwhile together next', async () => {
    const recorder = new GatedRecorder();
    const grouped = new GroupedRecording(recorder, { unitsAtOnce: 1 });
    const first = [grouped.recordBatch(batch(1)), grouped.recordBatch(batch(5))];
    await untilUnits(recorder, 1);
    const waiting = [grouped.recordBatch(batch(2)), grouped.recordBatch(batch(3)), grouped.recordBatch(batch(4))];
    recorder.finish();
    await expect(Promise.all(first)).resolves.toEqual([
      expect.objectContaining({ duplicates: 1 }),
      expect.objectContaining({ duplicates: 5 }),
    ]);
    await untilUnits(recorder, 2);
    recorder.finish();
    // Each batch has its own outcome.
    await expect(Promise.all(waiting)).resolves.toEqual([
      expect.objectContaining({ duplicates: 2 }),
      expect.objectContaining({ duplicates: 3 }),
      expect.objectContaining({ duplicates: 4 }),
    ]);
    expect(recorder.units).toEqual([
      [1, 5],
      [2, 3, 4],
    ]);
  });

  it('gathers one batch per partition and no more events than its bound; the rest wait for the next unit', async () => {
    const recorder = new GatedRecorder();
    const grouped = new GroupedRecording(recorder, { maxEvents: 5, unitsAtOnce: 1 });
    const all = [grouped.recordBatch(batch(1))];
    await untilUnits(recorder, 1);
    all.push(
      grouped.recordBatch(batch(2, 3)),
      grouped.recordBatch(batch(2, 1)),
      grouped.recordBatch(batch(3, 3)),
      grouped.recordBatch(batch(4, 2)),
    );
    for (let unit = 1; unit <= 3; unit += 1) {
      recorder.finish();
      await untilUnits(recorder, Math.min(unit + 1, 3));
    }
    recorder.finish();
    await Promise.all(all);
    expect(recorder.units).toEqual([[1], [2, 4], [2, 3]]);
  });

  it('records two units at once: what arrives while both are under way waits, and goes together in the next', async () => {
    const recorder = new GatedRecorder();
    const grouped = new GroupedRecording(recorder, { maxEvents: 4, unitsAtOnce: 2 });
    const all = [grouped.recordBatch(batch(1, 3)), grouped.recordBatch(batch(2, 3))];
    await untilUnits(recorder, 2);
    all.push(grouped.recordBatch(batch(3)), grouped.recordBatch(batch(4)));
    await nextTurn();
    expect(recorder.units).toEqual([[1], [2]]);
    recorder.finish();
    await untilUnits(recorder, 3);
    recorder.finish();
    recorder.finish();
    await Promise.all(all);
    expect(recorder.units).toEqual([[1], [2], [3, 4]]);
  });

  it('records each batch of a failed unit alone: the poison batch fails, its neighbours are recorded', async () => {
    const recorder = new GatedRecorder();
    const grouped = new GroupedRecording(recorder, { unitsAtOnce: 1 });
    const first = grouped.recordBatch(batch(1));
    await untilUnits(recorder, 1);
    const neighbour = grouped.recordBatch(batch(2));
    const poison = grouped.recordBatch(batch(13));
    poison.catch(() => undefined);
    recorder.finish();
    await first;
    for (let unit = 2; unit <= 4; unit += 1) {
      await untilUnits(recorder, unit);
      recorder.finish();
    }
    await expect(neighbour).resolves.toMatchObject({ duplicates: 2 });
    await expect(poison).rejects.toThrow('partition 13 failed');
    expect(recorder.units).toEqual([[1], [2, 13], [2], [13]]);
  });

  it('answers every batch exactly once, with its own outcome or failure, however batches arrive and units end', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.record({ partition: fc.integer({ min: 0, max: 14 }), events: fc.integer({ min: 0, max: 4 }), before: fc.nat(3) }), {
          minLength: 1,
          maxLength: 12,
        }),
        fc.boolean(),
        fc.integer({ min: 1, max: 3 }),
        async (arrivals, failWhole, unitsAtOnce) => {
          const recorder = new GatedRecorder();
          recorder.failWhole = failWhole;
          const grouped = new GroupedRecording(recorder, { maxEvents: 6, unitsAtOnce });
          const answers: Array<Promise<string>> = [];
          for (const arrival of arrivals) {
            // Units end while batches arrive.
            for (let i = 0; i < arrival.before; i += 1) recorder.finish();
            if (arrival.before > 0) await nextTurn();
            const command = batch(arrival.partition, arrival.events);
            answers.push(
              grouped.recordBatch(command).then(
                (outcome) => `ok ${(outcome as RecordBatchOutcome).duplicates}`,
                (error: Error) => `failed ${error.message}`,
              ),
            );
          }
          let settled = false;
          const all = Promise.all(answers).finally(() => (settled = true));
          for (let i = 0; i < 1_000 && !settled; i += 1) {
            recorder.finish();
            await nextTurn();
          }
          const expected = arrivals.map(({ partition }) =>
            failWhole || partition === 13 ? `failed partition ${partition} failed` : `ok ${partition}`,
          );
          expect(await all).toEqual(expected);
          // No unit ever held two batches of one partition.
          for (const unit of recorder.units) expect(new Set(unit).size).toBe(unit.length);
        },
      ),
    );
  });
});
