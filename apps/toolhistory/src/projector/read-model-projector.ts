import type { ToolEventType } from '@toolhistory/contract';
import type { CheckpointedProjection, GlobalPosition, RecordedEventKeys, RecordedToolEvent, SubscribeOptions } from '@toolhistory/domain';
import { type AppError, toAppError } from '@toolhistory/errors';
import { narrowDownFailures } from '../recorder/narrow-down-failures';
import { retryWithBackoff } from '../recorder/retry-with-backoff';
import { inBatches } from './in-batches';

export interface ProjectorLog {
  info(fields: Record<string, unknown>, message: string): void;
  warn(fields: Record<string, unknown>, message: string): void;
  error(fields: Record<string, unknown>, message: string): void;
}

export interface ProjectorOptions {
  /** The projection's name in log lines. */
  name?: string;
  /** Only these event types reach the projection (all when absent). */
  types?: readonly ToolEventType[];
  batchSize?: number;
  lingerMs?: number;
  log?: ProjectorLog;
  /** How often the freshness lag is logged while events are applied (0: never). */
  lagReportIntervalMs?: number;
  /**
   * While this answers true (recording is under way), the projector waits
   * as long as its last batch took before the next one: it takes at most
   * half of the time, and what is left goes to what it gives way to.
   */
  giveWayWhile?: () => boolean;
  /**
   * While this answers true (the instance is refusing reads: a flood), the
   * projector holds its next batch, so the cores go to answering and
   * refusing; but only while the batch's oldest event was recorded less than
   * `holdAtMostMs` ago, so holding never leaves the projection further
   * behind than that (docs/adr/039-search-holds-while-reads-are-refused.md).
   */
  holdWhile?: () => boolean;
  holdAtMostMs?: number;
}

/** How often a held projector looks again whether it may go on. */
export const HOLD_CHECK_MS = 250;

/**
 * How long to hold a batch whose oldest event was recorded at
 * `oldestRecordedAtMs` before looking again: 0 (go on) when reads are not
 * being refused or the batch is `holdAtMostMs` old; otherwise until the next
 * look or that age, whichever comes first.
 */
export function holdMs(nowMs: number, oldestRecordedAtMs: number, holdAtMostMs: number, readsRefused: boolean): number {
  if (!readsRefused || !Number.isFinite(oldestRecordedAtMs)) return 0;
  return Math.max(0, Math.min(HOLD_CHECK_MS, oldestRecordedAtMs + holdAtMostMs - nowMs));
}

/** How far behind the event store the projection was over the last report interval. */
export interface ProjectionFreshness {
  /** Since the event applied last was recorded, when it was applied. */
  lastLagMs: number;
  maxLagMs: number;
  events: number;
}

/** What a projector follows: an EventStore (whole events), or an EventKeyFeed (their keys only). */
export interface ProjectionFeed<T extends RecordedEventKeys> {
  subscribe(after: GlobalPosition, options?: SubscribeOptions): AsyncIterable<T>;
}

/**
 * Feeds a checkpointed projection from an event store subscription (or, for
 * a projection that needs only the events' keys, an EventKeyFeed): from
 * the checkpoint on, in batches, each applied with its checkpoint in one
 * transaction. Any failure (store or database) restarts the subscription
 * from the committed checkpoint after a backoff, so nothing is skipped.
 */
export class ReadModelProjector<T extends RecordedEventKeys = RecordedToolEvent> {
  private readonly abort = new AbortController();
  private running: Promise<void> | null = null;
  private readonly name: string;
  private interval: ProjectionFreshness = { lastLagMs: 0, maxLagMs: 0, events: 0 };
  private lagTimer: NodeJS.Timeout | null = null;
  private lastApplyMs = 0;
  private batchesApplying = 0;

  constructor(
    private readonly events: ProjectionFeed<T>,
    private readonly projection: CheckpointedProjection<T>,
    private readonly options: ProjectorOptions = {},
  ) {
    this.name = options.name ?? 'read-model';
  }

  start(): void {
    this.running ??= this.run();
    const every = this.options.lagReportIntervalMs ?? 0;
    if (every > 0 && !this.lagTimer) {
      this.lagTimer = setInterval(() => this.reportLag(), every);
      this.lagTimer.unref();
    }
  }

  async stop(): Promise<void> {
    this.abort.abort();
    if (this.lagTimer) clearInterval(this.lagTimer);
    this.lagTimer = null;
    await this.running;
  }

  /** Whether a batch is being applied right now: what a projection that comes second gives way to. */
  applying(): boolean {
    return this.batchesApplying > 0;
  }

  /** The lag of the last applied batch, the worst since the last report, and how many events that covers. */
  freshness(): ProjectionFreshness {
    return { ...this.interval };
  }

  private noteApplied(batch: readonly T[]): void {
    const lagMs = Math.max(0, Date.now() - Date.parse(batch[batch.length - 1].recordedAt));
    this.interval = {
      lastLagMs: lagMs,
      maxLagMs: Math.max(this.interval.maxLagMs, lagMs),
      events: this.interval.events + batch.length,
    };
  }

  private reportLag(): void {
    const { maxLagMs, lastLagMs, events } = this.interval;
    if (events === 0) return;
    this.options.log?.info({ projection: this.name, lagMs: lastLagMs, maxLagMs, events }, 'projection freshness');
    this.interval = { lastLagMs, maxLagMs: 0, events: 0 };
  }

  private async run(): Promise<void> {
    const { signal } = this.abort;
    while (!signal.aborted) {
      try {
        await retryWithBackoff(() => this.follow(), {
          initialDelayMs: 250,
          maxDelayMs: 10_000,
          shouldContinue: () => !signal.aborted,
          onRetry: (error, attempt, delayMs) =>
            this.options.log?.warn(
              { err: { code: error.code, message: error.message }, attempt, delayMs },
              `${this.name} projection interrupted; resuming from its checkpoint`,
            ),
        });
      } catch (error) {
        if (signal.aborted) return;
        // Not retriable (a bug or bad data): keep trying slowly rather than stop feeding the read model.
        this.options.log?.warn({ err: { message: toAppError(error).message } }, `${this.name} projection failed; retrying in 10 s`);
        await pause(10_000, signal);
      }
    }
  }

  private async follow(): Promise<void> {
    const { signal } = this.abort;
    const from = await this.projection.checkpoint();
    this.options.log?.info({ projection: this.name, from }, `${this.name} projection following the event store`);
    const batches = inBatches(
      this.events.subscribe(from, { signal, types: this.options.types }),
      this.options.batchSize ?? 1_000,
      this.options.lingerMs ?? 20,
    );
    for await (const batch of batches) {
      await this.hold(batch, signal);
      if (this.options.giveWayWhile?.()) await pause(Math.min(this.lastApplyMs, 1_000), signal);
      const started = Date.now();
      this.batchesApplying += 1;
      try {
        await this.applyBatch(batch);
      } finally {
        this.batchesApplying -= 1;
      }
      this.lastApplyMs = Date.now() - started;
    }
  }

  /** Holds the batch while `holdWhile` answers true, at most until its oldest event is `holdAtMostMs` old. */
  private async hold(batch: readonly T[], signal: AbortSignal): Promise<void> {
    const { holdWhile, holdAtMostMs = 0 } = this.options;
    if (!holdWhile || holdAtMostMs <= 0) return;
    const started = Date.now();
    // An event stamped later than now (another host's clock) counts as recorded now: one hold never passes the bound.
    const oldest = Math.min(Date.parse(batch[0].recordedAt), started);
    for (let wait = holdMs(started, oldest, holdAtMostMs, holdWhile()); wait > 0 && !signal.aborted;) {
      await pause(wait, signal);
      wait = holdMs(Date.now(), oldest, holdAtMostMs, holdWhile());
    }
    const heldMs = Date.now() - started;
    if (heldMs >= HOLD_CHECK_MS)
      this.options.log?.info(
        { projection: this.name, heldMs, lagMs: Math.max(0, Date.now() - oldest) },
        `${this.name} projection held its batch while reads were refused`,
      );
  }

  /**
   * A failure that may pass (the database is away) goes up and is retried
   * from the checkpoint. Any other is narrowed down to its event: applied
   * alone, an event that still fails is skipped with its reason, kept in
   * the projection's failures, and the others go on.
   */
  private async applyBatch(batch: readonly T[]): Promise<void> {
    await narrowDownFailures(
      batch,
      () => this.projection.apply(batch),
      (recorded) => this.projection.apply([recorded]),
      (recorded, failure) => this.skip(recorded, failure),
    );
    this.noteApplied(batch);
  }

  /** Keeps the event in the projection's failures, with its reason, and moves the checkpoint past it. */
  private async skip(recorded: T, failure: AppError): Promise<void> {
    await this.projection.skip(recorded, { code: failure.code, reason: failure.message.slice(0, 2_000) });
    this.options.log?.error(
      {
        position: recorded.globalPosition,
        eventId: recorded.event.eventId,
        type: recorded.event.type,
        code: failure.code,
        reason: failure.message,
      },
      `event skipped by the ${this.name} projection: it fails to apply while the others apply`,
    );
  }
}

function pause(ms: number, signal: AbortSignal): Promise<void> {
  if (ms <= 0 || signal.aborted) return Promise.resolve();
  return new Promise<void>((resolve) => {
    // The signal lives as long as the projector: a listener left on it after each pause would pile up.
    const aborted = () => (clearTimeout(timer), resolve());
    const timer = setTimeout(() => (signal.removeEventListener('abort', aborted), resolve()), ms);
    signal.addEventListener('abort', aborted, { once: true });
  });
}
