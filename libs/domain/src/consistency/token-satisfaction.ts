import type { ConsistencyToken } from '@toolhistory/contract';
import type { RecordingProgress } from './recording-progress';

/**
 * What a read answers from, and so what "recorded" means for it: the read
 * model (replay, listings, watches), or one search's documents, which their
 * projection writes after the recording commit.
 */
export type ConsistencyNeed = { kind: 'read-model' } | { kind: 'search'; projection: string };

export interface SatisfactionRules {
  /**
   * The projection the read model follows, when it is not written with the
   * events (EventStoreDB): a token then waits for its checkpoint too. null:
   * the read model commits with the events (PostgreSQL).
   */
  readModelProjection: string | null;
}

export type Satisfaction =
  /** `verify`: learned by reading the database, not from the change feed, so a cached copy of the rows must be checked. */
  | { satisfied: true; verify: boolean }
  /** What is still missing, in words, for the UNAVAILABLE that ends a wait. */
  | { satisfied: false; missing: string };

/**
 * Whether everything through the token is in what `need` reads, by what the
 * process has heard. One rule for every read RPC: recorded (the partition's
 * next offset is past the token's), then, where the read answers from a
 * projection, that projection past the position recording reached.
 */
export function tokenSatisfaction(
  token: ConsistencyToken,
  need: ConsistencyNeed,
  progress: RecordingProgress,
  rules: SatisfactionRules,
): Satisfaction {
  const projection = need.kind === 'search' ? need.projection : rules.readModelProjection;
  if (token.kind === 'position') {
    if (projection === null) {
      return progress.position() >= token.position
        ? { satisfied: true, verify: false }
        : { satisfied: false, missing: `the event store has reached position ${progress.position()}, the token names ${token.position}` };
    }
    return checkpointPast(progress, projection, token.position, false);
  }
  const recorded = progress.partition(token.topic, token.partition);
  if (recorded === undefined || recorded.nextOffset <= token.offset) {
    const reached = recorded === undefined ? 'nothing of it recorded yet' : `recorded up to offset ${recorded.nextOffset - 1n}`;
    return {
      satisfied: false,
      missing: `partition ${token.partition} of ${token.topic} has ${reached}, the token names offset ${token.offset}`,
    };
  }
  if (projection === null) return { satisfied: true, verify: !recorded.fromFeed };
  // The position recording reached with that offset; the store's last one when only a read of the offset told it.
  const position = recorded.position ?? progress.position();
  return checkpointPast(progress, projection, position, !recorded.fromFeed);
}

function checkpointPast(progress: RecordingProgress, projection: string, position: bigint, verify: boolean): Satisfaction {
  const checkpoint = progress.checkpoint(projection);
  if (checkpoint !== undefined && checkpoint >= position) return { satisfied: true, verify };
  const at = checkpoint === undefined ? 'not been read yet' : `reached position ${checkpoint}`;
  return { satisfied: false, missing: `the ${projection} projection has ${at}, the token needs position ${position}` };
}
