import { EventStore, GlobalPosition, ReadModelRebuilder, RecordedToolEvent, START_POSITION } from '@toolhistory/domain';

export interface RebuildOutcome {
  /** Events applied in all. */
  events: number;
  /** Of those, the ones applied while the live read model was locked for the swap. */
  eventsDuringSwap: number;
  position: GlobalPosition;
  durationMs: number;
  swapMs: number;
}

export interface RebuildOptions {
  /** Events read and applied per transaction. */
  pageSize?: number;
  onProgress?: (eventsApplied: number, position: GlobalPosition) => void;
}

/**
 * Rebuilds the read model from the event store: everything up to the end of
 * the store is applied to fresh tables while the live ones keep answering
 * (and the recorder keeps writing); then the live read model is locked just
 * long enough to apply what arrived meanwhile and swap the tables.
 */
export class RebuildReadModel {
  constructor(
    private readonly events: EventStore,
    private readonly rebuilder: ReadModelRebuilder,
  ) {}

  async execute(options: RebuildOptions = {}): Promise<RebuildOutcome> {
    const pageSize = options.pageSize ?? 5_000;
    const started = Date.now();
    const rebuild = await this.rebuilder.begin();
    let applied = 0;
    let position = START_POSITION;
    const applyFrom = async (apply: (events: readonly RecordedToolEvent[]) => Promise<void>) => {
      // The next page is read while this one is applied.
      let next = this.events.readAll(position, { limit: pageSize });
      for (;;) {
        const page = await next;
        if (page.length === 0) return;
        position = page[page.length - 1].globalPosition;
        next = page.length === pageSize ? this.events.readAll(position, { limit: pageSize }) : Promise.resolve([]);
        next.catch(() => undefined); // awaited on the next turn; a failure of apply must not leave it unhandled
        await apply(page);
        applied += page.length;
        options.onProgress?.(applied, position);
      }
    };
    try {
      await applyFrom(rebuild.apply);
      await rebuild.buildIndexes();
      // What arrived while the indexes were built, so the swap's lock covers only the last few events.
      await applyFrom(rebuild.apply);
      const beforeSwap = applied;
      const swapStarted = Date.now();
      await rebuild.swap(async (apply) => {
        await applyFrom(apply);
        return position;
      });
      const finished = Date.now();
      return {
        events: applied,
        eventsDuringSwap: applied - beforeSwap,
        position,
        durationMs: finished - started,
        swapMs: finished - swapStarted,
      };
    } catch (error) {
      await rebuild.abandon().catch(() => undefined);
      throw error;
    }
  }
}
