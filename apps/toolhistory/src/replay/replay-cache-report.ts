import { Inject, Injectable, OnModuleDestroy, OnModuleInit } from '@nestjs/common';
import type { Logger } from 'pino';
import { REPLAY_READING, ROOT_LOGGER } from '../tokens';
import type { ReplayCacheStats } from './caching-replay-reader';
import type { ReplayReading } from './replay-reading';

/** How often the replay cache reports (until metrics expose it as gauges and counters). */
export const REPLAY_CACHE_REPORT_INTERVAL_MS = 60_000;

/** What changed between two readings of the cache's counters, with the share of requests the cache answered. */
export function cacheReport(previous: ReplayCacheStats, current: ReplayCacheStats) {
  const historyHits = current.historyHits - previous.historyHits;
  const rowHits = current.rowHits - previous.rowHits;
  const reads = current.reads - previous.reads;
  const requests = historyHits + rowHits + reads;
  return {
    requests,
    historyHits,
    rowHits,
    reads,
    versionChecks: current.versionChecks - previous.versionChecks,
    refused: current.refused - previous.refused,
    feedCurrent: current.feedCurrent,
    hitRate: requests === 0 ? null : Math.round(((historyHits + rowHits) / requests) * 1000) / 1000,
    bytes: current.bytes,
    conversations: current.conversations,
    histories: current.histories,
  };
}

/** Logs `replay cache` once a minute when replay was asked for: its hit rate and the bytes it holds. */
@Injectable()
export class ReplayCacheReport implements OnModuleInit, OnModuleDestroy {
  private timer?: NodeJS.Timeout;
  private last?: ReplayCacheStats;
  private readonly log: Logger;

  constructor(
    @Inject(REPLAY_READING) private readonly replay: ReplayReading,
    @Inject(ROOT_LOGGER) logger: Logger,
  ) {
    this.log = logger.child({ component: 'replay' });
  }

  onModuleInit(): void {
    this.last = this.replay.cacheStats();
    this.timer = setInterval(() => this.report(), REPLAY_CACHE_REPORT_INTERVAL_MS);
    this.timer.unref();
  }

  onModuleDestroy(): void {
    clearInterval(this.timer);
  }

  private report(): void {
    const current = this.replay.cacheStats();
    const report = cacheReport(this.last!, current);
    this.last = current;
    if (report.requests > 0) this.log.info({ cache: report }, 'replay cache');
  }
}
