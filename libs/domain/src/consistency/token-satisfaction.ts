import type { ConsistencyToken, ToolEventType } from '@toolhistory/contract';
import type { RecordingProgress } from './recording-progress';

/**
 * What a read answers from, and so what "recorded" means for it: the read
 * model (replay, listings, watches), or one search's documents, which their
 * projection writes after the recording commit from the events of its types.
 */
export type ConsistencyNeed = { kind: 'read-model' } | { kind: 'search'; projection: string; types: readonly ToolEventType[] };

export interface SatisfactionRules {
  /**
   * The projection the read model follows, when it is not written with the
   * events (EventStoreDB): a token then waits for its checkpoint too. null:
   * the read model commits with the events (PostgreSQL).
   */
  readModelProjection: string | null;
}

/** The projection a read must find past the token's events, with the event types it applies (all, when absent); none: recorded is enough. */
export function projectionOf(need: ConsistencyNeed, rules: SatisfactionRules): { name: string; types?: readonly ToolEventType[] } | null {
  if (need.kind === 'search') return { name: need.projection, types: need.types };
  return rules.readModelProjection === null ? null : { name: rules.readModelProjection };
}

export type Recorded =
  /**
   * `upTo`: the global position recording had reached with the token's
   * events, when known. `verify`: learned by reading the database rather
   * than from the change feed, so a cached copy of the rows must be checked.
   */
  | { recorded: true; upTo?: bigint; verify: boolean }
  /** What is still missing, in words, for the UNAVAILABLE that ends a wait. */
  | { recorded: false; missing: string };

/**
 * Step one of every read with a token: are its events recorded, by what the
 * process has heard? A Kafka message is once the partition's next offset is
 * past it; a position of the event store once the store has reached it.
 */
export function recordedThrough(token: ConsistencyToken, progress: RecordingProgress): Recorded {
  if (token.kind === 'position') {
    return progress.position() >= token.position
      ? { recorded: true, upTo: token.position, verify: false }
      : { recorded: false, missing: `the event store has reached position ${progress.position()}, the token names ${token.position}` };
  }
  const partition = progress.partition(token.topic, token.partition);
  if (partition === undefined || partition.nextOffset <= token.offset) {
    const reached = partition === undefined ? 'nothing of it recorded yet' : `recorded up to offset ${partition.nextOffset - 1n}`;
    return {
      recorded: false,
      missing: `partition ${token.partition} of ${token.topic} has ${reached}, the token names offset ${token.offset}`,
    };
  }
  return { recorded: true, ...(partition.position === undefined ? {} : { upTo: partition.position }), verify: !partition.fromFeed };
}

/**
 * Step two, for a read that answers from a projection: has it applied
 * everything of its types through `target` (the last position of those
 * types at or before where recording had come)?
 */
export function projectedThrough(
  progress: RecordingProgress,
  projection: string,
  target: bigint,
): { projected: true } | { projected: false; missing: string } {
  const checkpoint = progress.checkpoint(projection);
  if (target === 0n || (checkpoint !== undefined && checkpoint >= target)) return { projected: true };
  const at = checkpoint === undefined ? 'not been read yet' : `reached position ${checkpoint}`;
  return { projected: false, missing: `the ${projection} projection has ${at}, the token needs position ${target}` };
}
