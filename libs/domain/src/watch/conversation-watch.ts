import type { InvocationEvent, ToolEvent } from '@toolhistory/contract';
import type { InvocationRecord } from '../audit/invocation-listing';
import type { StoredRun } from '../audit/conversation-timeline';
import type { RecordedToolEvent } from '../ports/event-store.port';
import type { RunStatus } from '../projection/read-model.types';
import { isInvocationEvent, pairKeyOf } from '../projection/read-model-keys';

/**
 * WatchConversation (docs/adr/024-watch-a-conversation.md): one
 * conversation's invocations as they stand, then one change per event
 * recorded after that. The read model answers both; these rules say which
 * events a read covers and what each becomes.
 */

/** One conversation's read-model rows as one consistent read saw them. */
export interface WatchedConversationState {
  /** How many of the conversation's events the rows include (its stream's first events: 0 when unknown). */
  eventCount: number;
  /** The conversation was erased: the watch ends. */
  erased: boolean;
  /** In ListToolInvocations' order. */
  invocations: InvocationRecord[];
  runs: StoredRun[];
}

/**
 * What a watch reads after its snapshot, in one consistent read: the
 * conversation's events after a stream position, up to the event count
 * the rows include, with only the rows those events touch (the
 * invocations of their pair keys, the runs of those invocations).
 */
export interface WatchedConversationUpdate extends WatchedConversationState {
  /** In stream order. */
  events: RecordedToolEvent[];
}

/** `null`: no run row holds the run (yet). */
export type WatchedRunStatus = RunStatus | null;

export interface WatchedInvocation {
  invocation: InvocationRecord;
  runStatus: WatchedRunStatus;
}

export type ConversationChange =
  | {
      kind: 'invocation_changed';
      position: string;
      eventType: InvocationEvent['type'];
      invocation: WatchedInvocation;
    }
  | { kind: 'run_ended'; position: string; runId: string; status: 'completed' | 'failed'; endedAt: string };

/** The run whose status an invocation shows: the call's run, or the result's when only the result is recorded. */
export function runOfInvocation(invocation: Pick<InvocationRecord, 'runId' | 'requestedAt' | 'resultRunId'>): string {
  return invocation.requestedAt === null && invocation.resultRunId ? invocation.resultRunId : invocation.runId;
}

export function watchedInvocations(state: Pick<WatchedConversationState, 'invocations' | 'runs'>): WatchedInvocation[] {
  const statusOfRun = new Map(state.runs.map((run) => [run.runId, run.status]));
  return state.invocations.map((invocation) => ({ invocation, runStatus: statusOfRun.get(runOfInvocation(invocation)) ?? null }));
}

/**
 * The events a new read covers: after the `seen` first events of the
 * stream, up to the rows' event count (an event stored but not yet in the
 * rows waits for the next read). In stream order, each once.
 */
export function eventsToReport(events: readonly RecordedToolEvent[], seen: number, eventCount: number): RecordedToolEvent[] {
  return events
    .filter((e) => e.streamPosition > seen && e.streamPosition <= eventCount)
    .sort((a, b) => a.streamPosition - b.streamPosition);
}

/**
 * An invocation event's row: the same pair key in the event's run, else
 * the row it answers or decides from another run (a resumed run answers
 * its earlier run's call).
 */
function invocationOf(event: InvocationEvent, invocations: readonly WatchedInvocation[]): WatchedInvocation | undefined {
  const pairKey = pairKeyOf(event);
  const samePair = invocations.filter((w) => w.invocation.pairKey === pairKey);
  return (
    samePair.find((w) => w.invocation.runId === event.runId) ??
    samePair.find((w) => w.invocation.resultRunId === event.runId) ??
    samePair[samePair.length - 1]
  );
}

/** A change and the stream position of the event that made it (a watch skips what its snapshot already holds). */
export interface PositionedChange {
  streamPosition: number;
  change: ConversationChange;
}

/**
 * What each event means to a watcher, given the rows that include it (and
 * possibly later events: a change shows its invocation as the read found
 * it). An event whose invocation is not listed (ListToolInvocations leaves
 * out a row with neither call nor result) changes nothing a watcher sees.
 */
export function positionedChangesOf(
  events: readonly RecordedToolEvent[],
  state: Pick<WatchedConversationState, 'invocations' | 'runs'>,
): PositionedChange[] {
  const invocations = watchedInvocations(state);
  const changes: PositionedChange[] = [];
  for (const { event, globalPosition, streamPosition } of events) {
    const change = changeOf(event, globalPosition, invocations);
    if (change) changes.push({ streamPosition, change });
  }
  return changes;
}

export function changesOf(
  events: readonly RecordedToolEvent[],
  state: Pick<WatchedConversationState, 'invocations' | 'runs'>,
): ConversationChange[] {
  return positionedChangesOf(events, state).map((p) => p.change);
}

/**
 * The pair keys whose rows a read after the snapshot needs: those of the
 * invocation events read (a row of another run with the same key may be
 * the one an event answers or decides).
 */
export function pairKeysTouched(events: readonly RecordedToolEvent[]): string[] {
  const keys = new Set<string>();
  for (const { event } of events) if (isInvocationEvent(event)) keys.add(pairKeyOf(event));
  return [...keys];
}

/** The runs whose status the given invocations show. */
export function runsShownBy(invocations: readonly InvocationRecord[]): string[] {
  return [...new Set(invocations.map(runOfInvocation))];
}

function changeOf(event: ToolEvent, position: string, invocations: readonly WatchedInvocation[]): ConversationChange | null {
  switch (event.type) {
    case 'ToolCallRequested':
    case 'ToolResultReceived':
    case 'ToolApprovalRequested':
    case 'ToolApprovalDecided': {
      const invocation = invocationOf(event, invocations);
      return invocation ? { kind: 'invocation_changed', position, eventType: event.type, invocation } : null;
    }
    case 'RunCompleted':
      return { kind: 'run_ended', position, runId: event.runId, status: 'completed', endedAt: event.occurredAt };
    case 'RunFailed':
      return { kind: 'run_ended', position, runId: event.runId, status: 'failed', endedAt: event.occurredAt };
    case 'ModelResponseReceived':
      // A UI follows the calls; the model's response changes none of them.
      return null;
  }
}

/**
 * Splits the snapshot into parts of at most `maxBytes` each (by `sizeOf`),
 * in order; an invocation larger than that goes alone. Always at least one
 * part, so an unknown conversation answers one empty part.
 */
export function snapshotParts<T>(items: readonly T[], maxBytes: number, sizeOf: (item: T) => number): T[][] {
  const parts: T[][] = [[]];
  let bytes = 0;
  for (const item of items) {
    const size = sizeOf(item);
    const current = parts[parts.length - 1];
    if (current.length > 0 && bytes + size > maxBytes) {
      parts.push([item]);
      bytes = size;
    } else {
      current.push(item);
      bytes += size;
    }
  }
  return parts;
}
