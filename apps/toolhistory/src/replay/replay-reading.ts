import type { ConversationChanges, ReplayPolicy, ReplayReader, TokenCounter } from '@toolhistory/domain';
import { CachingReplayReader, type ReplayCacheStats } from './caching-replay-reader';
import { LimitedReplayReader } from './database-request-limit';
import { GetReplayHistory } from './get-replay-history';
import type { AwaitRecorded } from '../consistency/await-recorded';

export interface ReplayReadingOptions {
  /** Upper bound of the cache of conversations' rows and computed histories; 0 disables it. */
  cacheBytes: number;
  tokens: TokenCounter;
  changes?: ConversationChanges;
  /** Requests that may wait on the database at once; one more is refused (RESOURCE_EXHAUSTED). */
  maxDatabaseRequests?: number;
  now?: () => number;
  /** Waits for a request's consistency token. */
  awaitRecorded?: AwaitRecorded;
}

export interface ReplayReading {
  replay: GetReplayHistory;
  /** What the cache holds and how requests were answered (all zero without a cache). */
  cacheStats(): ReplayCacheStats;
}

/** The turn-start query over the store's reader: the request limit first, then the cache in front of it. */
export function replayReading(store: ReplayReader, policy: ReplayPolicy, options: ReplayReadingOptions): ReplayReading {
  const limited = new LimitedReplayReader(store, options.maxDatabaseRequests);
  const cached =
    options.cacheBytes > 0 ? new CachingReplayReader(limited, policy, { cacheBytes: options.cacheBytes, changes: options.changes }) : null;
  const replay = new GetReplayHistory(cached ?? limited, policy, {
    tokens: options.tokens,
    memo: cached ?? undefined,
    now: options.now,
    awaitRecorded: options.awaitRecorded,
  });
  return {
    replay,
    cacheStats: () =>
      cached?.stats(limited.refused) ?? {
        bytes: 0,
        conversations: 0,
        histories: 0,
        feedCurrent: false,
        historyHits: 0,
        rowHits: 0,
        reads: 0,
        versionChecks: 0,
        refused: limited.refused,
      },
  };
}
