import type { CheckpointedProjection, EventStore, RecordedToolEvent } from '@toolhistory/domain';
import { toAppError } from '@toolhistory/errors';
import { attemptAlone } from '../recorder/attempt-alone';
import { retryWithBackoff } from '../recorder/retry-with-backoff';
import { inBatches } from './in-batches';

export interface ProjectorLog {
  info(fields: Record<string, unknown>, message: string): void;
  warn(fields: Record<string, unknown>, message: string): void;
  error(fields: Record<string, unknown>, message: string): void;
}

export interface ProjectorOptions {
  batchSize?: number;
  lingerMs?: number;
  log?: ProjectorLog;
}

/**
 * Feeds a checkpointed projection from an event store subscription: from
 * the checkpoint on, in batches, each applied with its checkpoint in one
 * transaction. Any failure (store or database) restarts the subscription
 * from the committed checkpoint after a backoff, so nothing is skipped.
 */
export class ReadModelProjector {
  private readonly abort = new AbortController();
  private running: Promise<void> | null = null;

  constructor(
    private readonly events: EventStore,
    private readonly projection: CheckpointedProjection,
    private readonly options: ProjectorOptions = {},
  ) {}

  start(): void {
    this.running ??= this.run();
  }

  async stop(): Promise<void> {
    this.abort.abort();
    await this.running;
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
              'projection interrupted; resuming from its checkpoint',
            ),
        });
      } catch (error) {
        if (signal.aborted) return;
        // Not retriable (a bug or bad data): keep trying slowly rather than stop feeding the read model.
        this.options.log?.warn({ err: { message: toAppError(error).message } }, 'projection failed; retrying in 10 s');
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, 10_000);
          signal.addEventListener('abort', () => (clearTimeout(timer), resolve()), { once: true });
        });
      }
    }
  }

  private async follow(): Promise<void> {
    const { signal } = this.abort;
    const from = await this.projection.checkpoint();
    this.options.log?.info({ from }, 'projection following the event store');
    const batches = inBatches(this.events.subscribe(from, { signal }), this.options.batchSize ?? 1_000, this.options.lingerMs ?? 20);
    for await (const batch of batches) await this.applyBatch(batch);
  }

  /**
   * A failure that may pass (the database is away) goes up and is retried
   * from the checkpoint. Any other is narrowed down to its event: applied
   * alone, an event that still fails is skipped with its reason, kept in
   * the projection's failures, and the others go on.
   */
  private async applyBatch(batch: readonly RecordedToolEvent[]): Promise<void> {
    try {
      await this.projection.apply(batch);
      return;
    } catch (thrown) {
      if (toAppError(thrown).retriable) throw thrown;
    }
    for (const recorded of batch) {
      const failure = await attemptAlone(() => this.projection.apply([recorded]));
      if (!failure) continue;
      await this.projection.skip(recorded, { code: failure.code, reason: failure.message.slice(0, 2_000) });
      this.options.log?.error(
        {
          position: recorded.globalPosition,
          eventId: recorded.event.eventId,
          type: recorded.event.type,
          code: failure.code,
          reason: failure.message,
        },
        'event skipped by the read-model projection: it fails to apply while the others apply',
      );
    }
  }
}
