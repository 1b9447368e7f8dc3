import {
  type ConsistencyToken,
  isConsistencyToken,
  parseConsistencyToken,
} from '@toolhistory/contract';
import {
  type ConsistencyNeed,
  type RecordingProgress,
  type RecordingProgressReader,
  type SatisfactionRules,
  tokenSatisfaction,
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

  async awaitRecorded(readAfter: ReadAfter | undefined, need: ConsistencyNeed, signal?: AbortSignal): Promise<ReadFreshness> {
    if (readAfter === undefined || readAfter.token === '') return NO_WAIT;
    const token = this.parse(readAfter.token);
    const until = Date.now() + readAfter.waitMs;
    let satisfaction = tokenSatisfaction(token, need, this.progress, this.options.rules);
    if (satisfaction.satisfied) return { verify: satisfaction.verify };
    let nextRead = 0;
    for (;;) {
      const seen = this.progress.changes;
      if (Date.now() >= nextRead) {
        await this.read(token, need, signal);
        nextRead = Date.now() + (this.options.feedCurrent() ? this.pollMs.feedCurrent : this.pollMs.feedStale);
      }
      satisfaction = tokenSatisfaction(token, need, this.progress, this.options.rules);
      if (satisfaction.satisfied) return { verify: satisfaction.verify };
      const now = Date.now();
      if (now >= until) {
        throw new AppError(
          ErrorCode.NotYetRecorded,
          `consistency token ${readAfter.token}: not recorded within the deadline (${satisfaction.missing}); retry, or allow a longer deadline`,
        );
      }
      if (signal?.aborted) throw new AppError(ErrorCode.DeadlineExceeded, "the caller's deadline passed while waiting for recording");
      await this.progress.nextChange(seen, Math.min(until, nextRead) - now);
    }
  }

  private parse(text: string): ConsistencyToken {
    const token = parseConsistencyToken(text);
    if (!isConsistencyToken(token)) throw invalid(`consistency_token is not a consistency token: ${token.invalid}`);
    if (token.kind === 'kafka' && token.topic !== this.options.topic) {
      throw invalid(`consistency_token names topic ${token.topic}; this service records ${this.options.topic}`);
    }
    return token;
  }

  /** What the database says of the token's partition, the store's last position and the projection the read needs. */
  private async read(token: ConsistencyToken, need: ConsistencyNeed, signal?: AbortSignal): Promise<void> {
    const { consumerGroup } = this.options;
    let knowsPosition = token.kind === 'kafka' && this.progress.partition(token.topic, token.partition)?.position !== undefined;
    if (token.kind === 'kafka') {
      const recorded = await this.reader.recordedOffset(consumerGroup, token.topic, token.partition, signal);
      if (recorded === null) await this.checkPartition(token.partition);
      else {
        this.progress.heard({ kind: 'recorded', consumerGroup, topic: token.topic, partition: token.partition, ...recorded }, 'read');
        knowsPosition ||= recorded.position !== undefined;
      }
    }
    const projection = need.kind === 'search' ? need.projection : this.options.rules.readModelProjection;
    if (token.kind === 'position' || (projection !== null && !knowsPosition)) this.progress.positionRecorded(await this.reader.lastPosition(signal));
    if (projection !== null) {
      this.progress.heard({ kind: 'checkpoint', projection, position: await this.reader.checkpoint(projection, signal) }, 'read');
    }
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
