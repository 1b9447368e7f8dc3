import { NO_STREAM, START } from '@kurrent/kurrentdb-client';
import type { AppendStreamState, Position, ReadPosition, StreamState } from '@kurrent/kurrentdb-client';
import type { ExpectedStreamPosition, GlobalPosition, StreamRef } from '@toolhistory/domain';
import { ErrorCode, rejected } from '@toolhistory/errors';

/**
 * Every stream this adapter writes starts with this. Reads of $all ask the
 * server for it, so system streams and other applications' streams in the
 * same database never reach a reader.
 */
export const STREAM_PREFIX = 'toolhistory/';

/**
 * One stream per conversation: `toolhistory/<tenant>/<conversation>`, both
 * parts through encodeURIComponent. It escapes "/" (and "%"), so
 * `toolhistory/<tenant>/` is a prefix of exactly that tenant's streams: a
 * tenant "a" can never see the streams of a tenant "a/b" (`a%2Fb`). It also
 * escapes "$", so no stream name can look like a system stream.
 */
export function streamNameOf(stream: StreamRef): string {
  return `${tenantStreamPrefix(stream.tenantId)}${encodePart(stream.conversationId, 'conversationId')}`;
}

/** The server-side stream-name filter for one tenant's streams, or for all of ours. */
export function tenantStreamPrefix(tenantId?: string): string {
  return tenantId === undefined ? STREAM_PREFIX : `${STREAM_PREFIX}${encodePart(tenantId, 'tenantId')}/`;
}

/** JSON can carry a lone UTF-16 surrogate, which no stream name can hold: such an id is refused, like PostgreSQL refuses it. */
function encodePart(value: string, field: string): string {
  try {
    return encodeURIComponent(value);
  } catch {
    throw rejected(ErrorCode.UnstorableEvent, `${field} is not well-formed Unicode (a lone surrogate)`);
  }
}

/** The conversation a stream name stands for; null for names this adapter did not make. */
export function parseStreamName(name: string): StreamRef | null {
  if (!name.startsWith(STREAM_PREFIX)) return null;
  const parts = name.slice(STREAM_PREFIX.length).split('/');
  if (parts.length !== 2) return null;
  try {
    const [tenantId, conversationId] = parts.map((p) => decodeURIComponent(p));
    // Only the canonical spelling counts, so one conversation has one stream name.
    const ref = { tenantId, conversationId };
    return streamNameOf(ref) === name ? ref : null;
  } catch {
    return null;
  }
}

/**
 * Global positions.
 *
 * An append through the gRPC API writes each event as its own prepare record
 * flagged as committed, with no separate commit record; $all reports such an
 * event at {commit: p, prepare: p}, p being that record's place in the log,
 * and that holds for every event of a multi-event append too (each has its
 * own p). So the commit position alone is unique and strictly increasing in
 * $all order, fits int64, and is the GlobalPosition. (Events of explicit
 * transactions, a legacy TCP feature this adapter never uses, share one
 * commit position; none can be in our streams.)
 *
 * Resuming "after p": a $all read from {p, p} is inclusive (the event at p
 * comes back first), a catch-up subscription from {p, p} is exclusive. The
 * adapter starts both at {p, p} and drops every event at or before p itself,
 * so neither a gap nor a repeat can appear whichever rule the server applies.
 * "0" (START_POSITION) starts at the beginning of $all: no event is at 0.
 */
export function toGlobalPosition(position: Position): GlobalPosition {
  return position.commit.toString(10);
}

const MAX_INT64 = 2n ** 63n - 1n;

/** A GlobalPosition given by a caller, checked: a decimal int64, not negative. */
export function parseGlobalPosition(after: GlobalPosition): bigint {
  const position = /^\d{1,19}$/.test(after) ? BigInt(after) : -1n;
  if (position < 0n || position > MAX_INT64) {
    throw rejected(ErrorCode.InvalidArgument, `position ${JSON.stringify(after)} is not a global position of this store`);
  }
  return position;
}

/** Where a read or subscription of $all starts for "after" this position (see above). */
export function readPositionAfter(after: bigint): ReadPosition {
  return after === 0n ? START : { commit: after, prepare: after };
}

/** Whether an event at `position` comes after `after` in $all order. */
export function isAfter(position: Position, after: bigint): boolean {
  return position.commit > after;
}

/**
 * Stream positions are 1-based counts (1 after one event); EventStoreDB
 * revisions are 0-based event numbers. A stream holding `count` events is
 * at revision count - 1, or NO_STREAM when empty.
 */
export function revisionAt(count: number): StreamState {
  return count === 0 ? NO_STREAM : BigInt(count - 1);
}

/** The stream position of an event (or of a stream whose last event it is). */
export function streamPositionOf(revision: bigint): number {
  return Number(revision) + 1;
}

/** Whether the writer's belief about a stream of `count` events holds. */
export function expectationHolds(expected: ExpectedStreamPosition, count: number): boolean {
  if (expected === 'any') return true;
  if (expected === 'no_stream') return count === 0;
  return expected === count;
}

/**
 * The expected revision sent with an append, for a stream read at `count`
 * events: 'no_stream' -> NO_STREAM, n -> revision n - 1, and 'any' -> the
 * revision just read, so that nothing (a duplicate in particular) can slip
 * in between the duplicate check and the write.
 */
export function expectedRevisionFor(expected: ExpectedStreamPosition, count: number): AppendStreamState {
  if (expected === 'any') return revisionAt(count);
  if (expected === 'no_stream') return NO_STREAM;
  return revisionAt(expected);
}
