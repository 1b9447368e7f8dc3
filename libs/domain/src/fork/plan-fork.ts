import type { ToolEvent } from '@toolhistory/contract';
import type { RecordedToolEvent, StreamRef } from '../ports/event-store.port';

/** Where the copies go, and how each copy's id is made from its source event's (the same on every repeat). */
export interface ForkTarget extends StreamRef {
  copyEventId: (sourceEventId: string) => string;
}

export type ForkPlan =
  | {
      found: true;
      /** The source's events up to the message's run, as the fork's own, in the source's order. */
      copies: ToolEvent[];
      /** The global position in the source of the last event copied. */
      upToPosition: string;
    }
  | { found: false };

/**
 * A fork of `source` up to `messageId` (pure): every event of the source up
 * to the last event of the runs that message belongs to (the runs it
 * started, as their userMessageId, or the run it answered, as its
 * RunCompleted's assistantMessageId), copied as the fork's own: same
 * payloads, times, runs and call ids, a new event id each, and where it
 * came from (`forkedFrom`, whose `via` lists every conversation the payload
 * passed through, so erasing any of them reaches this copy).
 */
export function planFork(source: StreamRef, events: readonly RecordedToolEvent[], messageId: string, target: ForkTarget): ForkPlan {
  const runs = new Set(
    events
      .filter(({ event }) => event.userMessageId === messageId || (event.type === 'RunCompleted' && event.assistantMessageId === messageId))
      .map(({ event }) => event.runId),
  );
  if (runs.size === 0) return { found: false };
  const last = Math.max(...events.filter(({ event }) => runs.has(event.runId)).map((e) => e.streamPosition));
  const copied = events.filter((e) => e.streamPosition <= last).sort((a, b) => a.streamPosition - b.streamPosition);
  const copies = copied.map(({ event, globalPosition }): ToolEvent => ({
    ...event,
    eventId: target.copyEventId(event.eventId),
    tenantId: target.tenantId,
    conversationId: target.conversationId,
    forkedFrom: {
      conversationId: source.conversationId,
      position: globalPosition,
      via: [source.conversationId, ...(event.forkedFrom?.via ?? [])],
    },
  }));
  return { found: true, copies, upToPosition: copied[copied.length - 1].globalPosition };
}
