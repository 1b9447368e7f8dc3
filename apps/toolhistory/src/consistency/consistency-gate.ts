import { type ConsistencyToken, isConsistencyToken, parseConsistencyToken } from '@toolhistory/contract';
import {
  type ConsistencyNeed,
  projectedThrough,
  projectionOf,
  type Recorded,
  recordedThrough,
  type RecordingProgress,
  type RecordingProgressReader,
  type SatisfactionRules,
} from '@toolhistory/domain';
import { AppError, ErrorCode } from '@toolhistory/errors';

/** A read's consistency token and how long it may wait for it (what its deadline leaves, less the time to answer). */
export interface ReadAfter {
  token: string;
  waitMs: number;
}

/** How far a read may trust what the process holds: `verify` asks a cache to confirm its rows with the database once. */
export interface ReadFreshness {
  verify: boolean;
}

export interface ConsistencyGateOptions {
  consumerGroup: string;
  /** The topic the recorder consumes: the only one a Kafka token may name. */
  topic: string;
  /** The topic's partitions, asked of the broker only for a partition nothing was recorded from yet. */
  partitions: () => Promise<readonly number[]>;
  rules: SatisfactionRules;
  /** Whether the change feed delivers every notice now; while it does not, the database is asked more often. */
  feedCurrent: () => boolean;
  /** How often the database is asked while waiting: with the feed current (a safety net), and without it. */
  pollMs?: { feedCurrent: number; feedStale: number };
}

const NO_WAIT: ReadFreshness = Object.freeze({ verify: false });

/**
 * Read-your-writes (docs/adr/026-read-your-writes-branches-and-forks.md):
 * a read with a consistency token waits here until everything through the
 * token is in what it reads, as the process hears from the read model's
 * change feed, asking the database when it has not heard; past its wait it
 * is refused UNAVAILABLE, naming the token and how far recording has come,
 * never answered without the events.
 */
export class ConsistencyGate {
  private readonly pollMs: { feedCurrent: number; feedStale: number };

  constructor(
    private readonly progress: RecordingProgress,
    private readonly reader: RecordingProgressReader,
    private readonly options: ConsistencyGateOptions,
  ) {
    this.pollMs = options.pollMs ?? { feedCurrent: 1_000, feedStale: 100 };
  }

  /**
   * Steps: parse the token; wait until its events are recorded; for a read
   * that answers from a projection, find the last position of the
   * projection's event types up to where recording had come, and wait
   * until the projection has applied it.
   */
  async awaitRecorded(readAfter: ReadAfter | undefined, need: ConsistencyNeed, signal?: AbortSignal): Promise<ReadFreshness> {
    if (readAfter === undefined || readAfter.token === '') return NO_WAIT;
    const token = this.parse(readAfter.token, need);
    const wait = { token: readAfter.token, until: Date.now() + readAfter.waitMs, signal };
    const recorded = await this.waitUntil(
      wait,
      () => this.check(recordedThrough(token, this.progress)),
      () => this.readRecording(token, signal),
    );
    const projection = projectionOf(need, this.options.rules);
    if (projection === null) return { verify: recorded.verify };
    const upTo = recorded.upTo ?? (await this.reader.lastPosition(signal));
    const target = projection.types === undefined ? upTo : await this.reader.lastPositionOf(projection.types, upTo, signal);
    await this.waitUntil(
      wait,
      () => {
        const projected = projectedThrough(this.progress, projection.name, target);
        return projected.projected ? { done: true as const } : { done: false as const, missing: projected.missing };
      },
      async () =>
        this.progress.heard(
          { kind: 'checkpoint', projection: projection.name, position: await this.reader.checkpoint(projection.name, signal) },
          'read',
        ),
    );
    return { verify: recorded.verify };
  }

  /**
   * Checks, reading the database when the feed has told nothing for a
   * while, until the check holds or the wait is over (then UNAVAILABLE,
   * naming the token and what is missing).
   */
  private async waitUntil<T>(
    wait: { token: string; until: number; signal?: AbortSignal },
    check: () => ({ done: true } & T) | { done: false; missing: string },
    read: () => Promise<void>,
  ): Promise<T> {
    let nextRead = 0;
    for (;;) {
      const seen = this.progress.changes;
      let checked = check();
      if (checked.done) return checked;
      if (Date.now() >= nextRead) {
        await read();
        nextRead = Date.now() + (this.options.feedCurrent() ? this.pollMs.feedCurrent : this.pollMs.feedStale);
        checked = check();
        if (checked.done) return checked;
      }
      const now = Date.now();
      if (now >= wait.until) {
        throw new AppError(
          ErrorCode.NotYetRecorded,
          `consistency token ${wait.token}: not recorded within the deadline (${checked.missing}); retry, or allow a longer deadline`,
        );
      }
      if (wait.signal?.aborted) throw new AppError(ErrorCode.DeadlineExceeded, "the caller's deadline passed while waiting for recording");
      await this.progress.nextChange(seen, Math.min(wait.until, nextRead) - now);
    }
  }

  private check(recorded: Recorded): ({ done: true } & Extract<Recorded, { recorded: true }>) | { done: false; missing: string } {
    return recorded.recorded ? { done: true, ...recorded } : { done: false, missing: recorded.missing };
  }

  private parse(text: string, need: ConsistencyNeed): ConsistencyToken {
    const token = parseConsistencyToken(text);
    if (!isConsistencyToken(token)) throw invalid(`consistency_token is not a consistency token: ${token.invalid}`);
    if (token.kind === 'kafka' && token.topic !== this.options.topic) {
      throw invalid(`consistency_token names topic ${token.topic}; this service records ${this.options.topic}`);
    }
    if (need.kind === 'search' && this.options.rules.readModelProjection !== null) {
      // Search documents are made from the events in this database; with another event store their positions cannot be matched.
      throw new AppError(ErrorCode.NotSupported, 'consistency_token with SearchToolHistory needs the PostgreSQL event store');
    }
    return token;
  }

  /** What the database says of the token's partition (a Kafka token), or of the store's last position (a position token). */
  private async readRecording(token: ConsistencyToken, signal?: AbortSignal): Promise<void> {
    if (token.kind === 'position') return this.progress.positionRecorded(await this.reader.lastPosition(signal));
    const { consumerGroup } = this.options;
    const recorded = await this.reader.recordedOffset(consumerGroup, token.topic, token.partition, signal);
    if (recorded === null) return this.checkPartition(token.partition);
    this.progress.heard({ kind: 'recorded', consumerGroup, topic: token.topic, partition: token.partition, ...recorded }, 'read');
  }

  /** A partition nothing was recorded from: refused when the topic has no such partition (a broker that does not answer decides nothing). */
  private async checkPartition(partition: number): Promise<void> {
    const partitions = await this.options.partitions().catch(() => undefined);
    if (partitions !== undefined && !partitions.includes(partition)) {
      throw invalid(`consistency_token names partition ${partition}, which ${this.options.topic} does not have`);
    }
  }
}

const invalid = (message: string) => new AppError(ErrorCode.InvalidArgument, message);
