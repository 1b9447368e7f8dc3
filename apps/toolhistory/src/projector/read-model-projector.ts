import type { CheckpointedProjection, EventStore } from '@toolhistory/domain';
import { toAppError } from '@toolhistory/errors';
import { retryWithBackoff } from '../recorder/retry-with-backoff';
import { inBatches } from './in-batches';

export interface ProjectorLog {
  info(fields: Record<string, unknown>, message: string): void;
  warn(fields: Record<string, unknown>, message: string): void;
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
    for await (const batch of batches) await this.projection.apply(batch);
  }
}
