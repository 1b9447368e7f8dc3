import type { Offset, OffsetGap, RecordBatchCommand, RecordBatchOutcome, RecordingStore } from '../ports/recording-store.port';

/** What the grouped recording needs of the recording service (record-batch.ts). */
export interface BatchRecorder extends RecordingStore {
  recordBatches(commands: readonly RecordBatchCommand[]): Promise<Array<RecordBatchOutcome | OffsetGap>>;
}

export interface GroupedRecordingOptions {
  /** The most events one unit gathers (a batch larger than that is recorded alone). */
  maxEvents?: number;
  /** Units recorded at once. */
  unitsAtOnce?: number;
}

interface Waiting {
  command: RecordBatchCommand;
  resolve: (outcome: RecordBatchOutcome | OffsetGap) => void;
  reject: (error: unknown) => void;
}

/**
 * Live traffic's batches (tens of events) all fit in one unit; a catch-up's
 * (a broker fetch of a partition, about 1,500 events of 1 KB) go one or two
 * to a unit, so that two units overlap: the service's work on one beside
 * PostgreSQL's on the other (docs/benchmarks.md, "Group commit").
 */
const DEFAULT_MAX_EVENTS = 2_000;
const DEFAULT_UNITS_AT_ONCE = 2;

/**
 * Group commit: batches of several partitions are recorded together, in
 * one unit of work (with PostgreSQL one transaction, one commit and one
 * statement per step for all of them) instead of one unit each: those that
 * arrive in the same turn of the event loop (one broker fetch), and those
 * that arrive while two units are under way, which then wait. Live
 * traffic comes as many small batches, whose units cost more than their
 * events (docs/benchmarks.md, "Group commit"); a batch that finds nothing
 * under way starts at the end of the event loop's turn (with the batches
 * of the same fetch), so a quiet partition waits for nothing else.
 *
 * Each batch gets its own outcome. When a gathered unit fails, whose
 * failure it was is unknown: each of its batches is then recorded alone,
 * so a poison event fails only its own batch (which narrows it down, as
 * before) and an outage fails each, to be retried by its partition.
 */
export class GroupedRecording implements RecordingStore {
  private waiting: Waiting[] = [];
  private units = 0;
  private startPending = false;
  private readonly maxEvents: number;
  private readonly unitsAtOnce: number;

  constructor(
    private readonly recorder: BatchRecorder,
    options: GroupedRecordingOptions = {},
  ) {
    this.maxEvents = options.maxEvents ?? DEFAULT_MAX_EVENTS;
    this.unitsAtOnce = options.unitsAtOnce ?? DEFAULT_UNITS_AT_ONCE;
  }

  recordBatch(command: RecordBatchCommand): Promise<RecordBatchOutcome | OffsetGap> {
    return new Promise((resolve, reject) => {
      this.waiting.push({ command, resolve, reject });
      // The partitions of one broker fetch arrive in the same turn of the event loop: a unit starts at the end
      // of that turn, so it takes them all rather than the first alone.
      if (!this.startPending && this.units < this.unitsAtOnce) {
        this.startPending = true;
        setImmediate(() => {
          this.startPending = false;
          this.recordNext();
        });
      }
    });
  }

  committedOffsets(consumerGroup: string, topic: string): Promise<Map<number, Offset>> {
    return this.recorder.committedOffsets(consumerGroup, topic);
  }

  private recordNext(): void {
    while (this.units < this.unitsAtOnce && this.waiting.length > 0) {
      const group = this.takeGroup();
      this.units += 1;
      void this.record(group).finally(() => {
        this.units -= 1;
        this.recordNext();
      });
    }
  }

  /** The waiting batches in arrival order, one per partition, up to the bound of events (the first always). */
  private takeGroup(): Waiting[] {
    const group: Waiting[] = [];
    const later: Waiting[] = [];
    const partitions = new Set<string>();
    let events = 0;
    for (const waiting of this.waiting) {
      const partition = JSON.stringify([waiting.command.consumerGroup, waiting.command.topic, waiting.command.partition]);
      const fits = group.length === 0 || (!partitions.has(partition) && events + waiting.command.events.length <= this.maxEvents);
      if (!fits) {
        later.push(waiting);
        continue;
      }
      group.push(waiting);
      partitions.add(partition);
      events += waiting.command.events.length;
    }
    this.waiting = later;
    return group;
  }

  private async record(group: readonly Waiting[]): Promise<void> {
    if (group.length > 1) {
      const outcomes = await this.recorder.recordBatches(group.map((w) => w.command)).catch(() => null);
      if (outcomes !== null) {
        group.forEach((waiting, i) => waiting.resolve(outcomes[i]));
        return;
      }
    }
    for (const waiting of group) await this.recorder.recordBatch(waiting.command).then(waiting.resolve, waiting.reject);
  }
}
