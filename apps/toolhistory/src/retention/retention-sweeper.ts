import type { Logger } from 'pino';
import type { DataKeyStore } from '@toolhistory/domain';
import type { ExpirySweep } from '@toolhistory/persistence';

/** What one sweep did: the read model's part, and the keys destroyed after it. */
export interface RetentionSweepOutcome extends ExpirySweep {
  keysDestroyed: number;
}

export interface RetentionSweeperParts {
  /** The read model's part: payloads removed from rows and search. */
  expiry: { sweep(now: Date): Promise<ExpirySweep> };
  keys: DataKeyStore;
  /** Drops destroyed keys from this process's memory. */
  forget(keyIds: readonly string[]): void;
  /** Counts what expired (toolhistory_payloads_expired_total, toolhistory_data_keys_destroyed_total). */
  counted(outcome: RetentionSweepOutcome): void;
  log: Logger;
  now?: () => Date;
}

const KEYS_PER_ROUND = 1_000;

/**
 * Retention (docs/adr/033), run by the recorder role every
 * RETENTION_SWEEP_INTERVAL: payloads past their end of retention leave the
 * read model and the search documents, then their data keys are destroyed,
 * so every other copy (the events, backups, replicas) is unreadable from
 * then on. In that order: a sweep cut short leaves keys for the next one,
 * never documents whose keys are gone. One sweep at a time per process;
 * several processes share the work (rows and keys are claimed with locks).
 */
export class RetentionSweeper {
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<unknown> | null = null;
  private stopped = false;

  constructor(private readonly parts: RetentionSweeperParts) {}

  start(intervalMs: number): void {
    const tick = () => {
      if (this.stopped) return;
      this.running ??= this.sweep()
        .catch((error: unknown) =>
          this.parts.log.warn(
            { component: 'retention', err: { message: error instanceof Error ? error.message : String(error) } },
            'retention sweep failed; the next one tries again',
          ),
        )
        .finally(() => {
          this.running = null;
          if (!this.stopped) this.timer = setTimeout(tick, intervalMs);
        });
    };
    // The first sweep right after start-up: what expired while no recorder ran goes at once.
    this.timer = setTimeout(tick, 0);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    await this.running;
  }

  async sweep(): Promise<RetentionSweepOutcome> {
    const now = (this.parts.now ?? (() => new Date()))();
    const rows = await this.parts.expiry.sweep(now);
    let keysDestroyed = 0;
    for (;;) {
      const destroyed = await this.parts.keys.destroyExpired(now.toISOString(), KEYS_PER_ROUND);
      this.parts.forget(destroyed.map((k) => k.keyId));
      keysDestroyed += destroyed.length;
      if (destroyed.length > 0)
        this.parts.log.debug(
          { component: 'retention', keyIds: destroyed.map((k) => k.keyId) },
          'data keys destroyed: their retention ended',
        );
      if (destroyed.length < KEYS_PER_ROUND) break;
    }
    const outcome = { ...rows, keysDestroyed };
    this.parts.counted(outcome);
    if (rows.payloads > 0 || keysDestroyed > 0)
      this.parts.log.info({ component: 'retention', ...outcome }, 'payloads past their retention removed; their data keys destroyed');
    return outcome;
  }
}
