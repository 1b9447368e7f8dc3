import type { GlobalPosition, RecordedEventKeys, RecordedToolEvent } from './event-store.port';

/**
 * A projection fed by an event store subscription: its rows and the
 * position it has applied up to change in one transaction, so a crash at
 * any point neither loses nor doubles an event. It is fed whole events, or
 * (a projection that needs their keys only) what an EventKeyFeed gives.
 */
export interface CheckpointedProjection<T extends RecordedEventKeys = RecordedToolEvent> {
  /** The last global position applied ("0": none). */
  checkpoint(): Promise<GlobalPosition>;
  /**
   * Applies events in global order and moves the checkpoint to the last
   * one, atomically. Events at or before the checkpoint are skipped, so a
   * redelivered or concurrently applied batch is harmless.
   */
  apply(events: readonly T[]): Promise<void>;
  /**
   * Moves the checkpoint past an event that cannot be applied, keeping what
   * was skipped and why, atomically: one bad event must not stop the
   * projection for every tenant.
   */
  skip(event: T, failure: { code: string; reason: string }): Promise<void>;
}
