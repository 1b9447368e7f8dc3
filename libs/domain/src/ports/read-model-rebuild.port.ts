import type { GlobalPosition, RecordedToolEvent } from './event-store.port';

export interface RebuildProgress {
  events: number;
  position: GlobalPosition;
}

/** Applies events (in global order) to the read model being built. */
export type ApplyEvents = (events: readonly RecordedToolEvent[]) => Promise<void>;

/** A read model being built from the event store beside the live one. */
export interface ReadModelRebuild {
  /** Fast while only the keys are indexed: call it for the bulk of the events first. */
  apply: ApplyEvents;
  /** Builds the read model's other indexes, once, after the bulk (faster than maintaining them row by row). */
  buildIndexes(): Promise<void>;
  /**
   * Stops every writer of the live read model, lets `finish` apply the last
   * events through the given apply, swaps the new tables in and records
   * `finish`'s position as the projection checkpoint, all in one
   * transaction. Readers wait for the swap, they do not fail.
   */
  swap(finish: (apply: ApplyEvents) => Promise<GlobalPosition>): Promise<void>;
  /** Drops what was built (after a failure). */
  abandon(): Promise<void>;
}

export interface ReadModelRebuilder {
  /** Fails at once (CONCURRENCY_CONFLICT) while another rebuild of the same read model runs. */
  begin(): Promise<ReadModelRebuild>;
}
