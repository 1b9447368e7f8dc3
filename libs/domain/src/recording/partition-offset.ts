import type { OffsetEvent, OffsetGap, RecordBatchCommand } from '../ports/recording-store.port';

/** The stored next offset of a partition nothing was recorded from yet: it is recorded from its beginning. */
export const NO_STORED_OFFSET = -1n;

export type OffsetDecision =
  | OffsetGap
  | {
      kind: 'record';
      /** The events at or after the stored offset, in partition order. */
      fresh: readonly OffsetEvent[];
      /** Events below it: recorded before (a redelivery after a rebalance or a crash). */
      alreadyCommitted: number;
      /** The stored offset is already at or past the batch's end: nothing to write, not even the offset. */
      upToDate: boolean;
    };

/**
 * What a batch does against the partition's stored next offset: the one rule
 * every recording store applies under its own lock.
 */
export function decideOffsets(stored: bigint, command: Pick<RecordBatchCommand, 'events' | 'nextOffset' | 'firstOffset'>): OffsetDecision {
  if (stored !== NO_STORED_OFFSET && command.firstOffset !== undefined && BigInt(command.firstOffset) > stored) {
    return { kind: 'gap', resumeAt: stored.toString() };
  }
  const fresh = command.events.filter((m) => BigInt(m.offset) >= stored);
  return { kind: 'record', fresh, alreadyCommitted: command.events.length - fresh.length, upToDate: stored >= BigInt(command.nextOffset) };
}

/** Whether a recording result is a gap rather than a recorded batch. */
export function isOffsetGap<T extends object>(result: T | OffsetGap): result is OffsetGap {
  return 'kind' in result && result.kind === 'gap';
}
