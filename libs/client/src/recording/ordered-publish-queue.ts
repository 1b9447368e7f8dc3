import type { PublishedEvent } from '../run-publisher';
import { ToolHistoryClientError } from '../tool-history-errors';

/** One publication that did not reach the broker (or was refused before it was sent). */
export interface PublishFailure {
  /** What was being published, e.g. `ToolCallRequested round 0 call 1 (call_a)`. */
  event: string;
  error: unknown;
}

/** Some of a run's events were not published: each failure, and what the broker did acknowledge. Retriable when every failure is. */
export class ToolHistoryPublishError extends ToolHistoryClientError {
  override readonly name = 'ToolHistoryPublishError';

  constructor(
    readonly failures: readonly PublishFailure[],
    readonly published: readonly PublishedEvent[],
  ) {
    super(
      `${failures.length} tool history event(s) not published: ${failures.map((f) => `${f.event}: ${errorMessage(f.error)}`).join('; ')}`,
      failures.length > 0 && failures.every((f) => (f.error as { retriable?: unknown } | null)?.retriable === true),
      { cause: failures[0]?.error },
    );
  }
}

/**
 * Publishes one step after the other, in the order they were pushed, whether
 * or not an earlier one failed (a run's events stay in order on the
 * conversation's partition; a failure does not hold back the rest). Keeps
 * what was acknowledged and what failed, for `settled()`. A step publishes
 * one event, a batch of them, or nothing.
 */
export class OrderedPublishQueue {
  private tail: Promise<void> = Promise.resolve();
  private readonly acknowledged: PublishedEvent[] = [];
  private readonly failures: PublishFailure[] = [];

  constructor(private readonly onFailure?: (failure: PublishFailure) => void) {}

  /** Whether a step failed (or a failure was recorded) so far. */
  get failed(): boolean {
    return this.failures.length > 0;
  }

  /** The first failure recorded, if any. */
  get firstFailure(): PublishFailure | undefined {
    return this.failures[0];
  }

  /** Runs `step` once every step pushed before it has finished; the promise is the step's own outcome. */
  push<T extends PublishedEvent | readonly PublishedEvent[] | undefined>(event: string, step: () => Promise<T>): Promise<T> {
    const outcome = this.tail.then(step);
    this.tail = outcome.then(
      (published) => {
        if (published === undefined) return;
        if (Array.isArray(published)) for (const one of published as readonly PublishedEvent[]) this.acknowledged.push(one);
        else this.acknowledged.push(published as PublishedEvent);
      },
      (error: unknown) => this.recordFailure({ event, error }),
    );
    return outcome;
  }

  /** A failure that is no publication (e.g. the handler used wrongly): reported like one. */
  recordFailure(failure: PublishFailure): void {
    this.failures.push(failure);
    try {
      this.onFailure?.(failure);
    } catch {
      // The listener's own failure must not break the chain; the failure stays recorded for settled().
    }
  }

  /** Resolves once every step pushed so far (and any pushed meanwhile) has finished, whatever its outcome. */
  async drained(): Promise<void> {
    let tail: Promise<void>;
    do {
      tail = this.tail;
      await tail;
    } while (tail !== this.tail);
  }

  /**
   * Resolves once every step pushed so far (and any pushed meanwhile) has
   * finished: with the acknowledged events in publication order, or rejects
   * with ToolHistoryPublishError if any step failed.
   */
  async settled(): Promise<PublishedEvent[]> {
    await this.drained();
    if (this.failures.length > 0) throw new ToolHistoryPublishError([...this.failures], [...this.acknowledged]);
    return [...this.acknowledged];
  }
}

function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
