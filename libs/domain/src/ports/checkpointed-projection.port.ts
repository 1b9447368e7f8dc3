import type { GlobalPosition, RecordedToolEvent } from './event-store.port';

/**
 * A projection fed by an event store subscription: its rows and the
 * position it has applied up to change in one transaction, so a crash at
 * any point neither loses nor doubles an event.
 */
export interface CheckpointedProjection {
  /** The last global position applied ("0": none). */
  checkpoint(): Promise<GlobalPosition>;
  /**
   * Applies events in global order and moves the checkpoint to the last
   * one, atomically. Events at or before the checkpoint are skipped, so a
   * redelivered or concurrently applied batch is harmless.
   */
  apply(events: readonly RecordedToolEvent[]): Promise<void>;
}
