/**
 * Where recording stands, as one process has heard it: the recorder's next
 * offset per partition, the last global position appended, and each
 * projection's checkpoint. Fed by the read model's change feed (in commit
 * order, after the changes it reports) and by reads of the database; a
 * reader that needs its own events recorded waits here for a change.
 * Knowledge only grows: a late or repeated notice never moves anything back.
 */

/** How a fact was learned: from the change feed (after every change it reports), or by reading the database. */
export type ProgressSource = 'feed' | 'read';

/** A fact of recording, as the change feed or a read reports it. */
export type ProgressNotice =
  /** A recording transaction committed with the partition's next offset (and, when it appended, the last global position it gave). */
  | { kind: 'recorded'; consumerGroup: string; topic: string; partition: number; nextOffset: bigint; position?: bigint }
  /** A projection's checkpoint moved. */
  | { kind: 'checkpoint'; projection: string; position: bigint };

export interface PartitionProgress {
  nextOffset: bigint;
  /** The highest next offset was heard from the change feed: every read-model change up to it was reported before it. */
  fromFeed: boolean;
  /** The last global position appended with that offset, when known. */
  position?: bigint;
}

const partitionKey = (topic: string, partition: number): string => `${partition}\u0000${topic}`;

export class RecordingProgress {
  private readonly partitions = new Map<string, PartitionProgress>();
  private readonly checkpoints = new Map<string, bigint>();
  private lastPosition = 0n;
  private version = 0;
  private readonly listeners = new Set<() => void>();

  constructor(private readonly consumerGroup: string) {}

  /** Takes a notice of this service's consumer group (others are not its recording). */
  heard(notice: ProgressNotice, source: ProgressSource): void {
    if (notice.kind === 'checkpoint') {
      if (notice.position > (this.checkpoints.get(notice.projection) ?? -1n)) this.checkpoints.set(notice.projection, notice.position);
      return this.changed();
    }
    if (notice.consumerGroup !== this.consumerGroup) return;
    const key = partitionKey(notice.topic, notice.partition);
    const known = this.partitions.get(key);
    if (notice.position !== undefined && notice.position > this.lastPosition) this.lastPosition = notice.position;
    if (known === undefined || notice.nextOffset > known.nextOffset) {
      this.partitions.set(key, {
        nextOffset: notice.nextOffset,
        fromFeed: source === 'feed',
        position: notice.position ?? known?.position,
      });
    } else if (notice.nextOffset === known.nextOffset && source === 'feed' && !known.fromFeed) {
      this.partitions.set(key, { ...known, fromFeed: true, position: notice.position ?? known.position });
    }
    this.changed();
  }

  /** The last global position known appended (a read of the store, or a recording notice). */
  positionRecorded(position: bigint): void {
    if (position <= this.lastPosition) return;
    this.lastPosition = position;
    this.changed();
  }

  partition(topic: string, partition: number): PartitionProgress | undefined {
    return this.partitions.get(partitionKey(topic, partition));
  }

  position(): bigint {
    return this.lastPosition;
  }

  checkpoint(projection: string): bigint | undefined {
    return this.checkpoints.get(projection);
  }

  /** Resolves at the next change heard, or after `ms` (whichever is first); a change since `since` resolves at once. */
  nextChange(since: number, ms: number): Promise<void> {
    if (this.version !== since) return Promise.resolve();
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.listeners.delete(done);
        resolve();
      };
      const timer = setTimeout(done, Math.max(0, ms));
      this.listeners.add(done);
    });
  }

  /** Counts changes: what `nextChange` compares with. */
  get changes(): number {
    return this.version;
  }

  private changed(): void {
    this.version += 1;
    for (const listener of [...this.listeners]) listener();
  }
}
