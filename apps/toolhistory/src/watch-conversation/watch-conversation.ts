import {
  changesOf,
  type ConversationChange,
  type ConversationKey,
  type ConversationWatchReader,
  type EventStore,
  eventsToReport,
  snapshotParts,
  type WatchedConversationState,
  type WatchedInvocation,
  watchedInvocations,
} from '@toolhistory/domain';
import { AppError, ErrorCode, checkRequestIds, requireArguments } from '@toolhistory/errors';
import { ChangeSignal, type ConversationChangeHub } from './conversation-change-hub';

export type WatchMessage = { kind: 'snapshot'; invocations: WatchedInvocation[]; complete: boolean } | ConversationChange;

/** A snapshot part's budget, well under gRPC's 4 MB message limit (payload text counts twice at most once escaped). */
export const SNAPSHOT_PART_BYTES = 1024 * 1024;

/** An estimate of an invocation's encoded size: its payloads dominate. */
const sizeOf = (watched: WatchedInvocation) =>
  JSON.stringify(watched.invocation.arguments ?? null).length + JSON.stringify(watched.invocation.result ?? null).length + 1024;

/**
 * WatchConversation: the conversation's invocations as they stand, then
 * the effect of each event recorded after that, until the caller stops
 * (docs/adr/024-watch-a-conversation.md). Steps:
 * 1. follow the conversation's read-model change notifications (before reading, so none is missed);
 * 2. read its rows and their event count in one read, and send them as the snapshot;
 * 3. on each notification, read again, and send one change per event the new rows include beyond the count already sent;
 * 4. end with NOT_FOUND when the conversation is erased.
 */
export class WatchConversation {
  constructor(
    private readonly reader: ConversationWatchReader,
    private readonly events: EventStore,
    private readonly hub: ConversationChangeHub,
    private readonly partBytes = SNAPSHOT_PART_BYTES,
  ) {}

  /** Throws INVALID_ARGUMENT before anything is read; the iterable ends when `signal` aborts. */
  execute(request: ConversationKey, signal: AbortSignal): AsyncIterable<WatchMessage> {
    requireArguments({ tenant_id: request.tenantId, conversation_id: request.conversationId });
    checkRequestIds({ tenant_id: request.tenantId, conversation_id: request.conversationId });
    return this.follow({ tenantId: request.tenantId, conversationId: request.conversationId }, signal);
  }

  private async *follow(conversation: ConversationKey, signal: AbortSignal): AsyncGenerator<WatchMessage> {
    const changed = new ChangeSignal();
    const unfollow = this.hub.follow(conversation, changed.notify);
    try {
      const first = await this.read(conversation);
      const parts = snapshotParts(watchedInvocations(first), this.partBytes, sizeOf);
      for (const [i, invocations] of parts.entries()) yield { kind: 'snapshot', invocations, complete: i === parts.length - 1 };
      let seen = first.eventCount;
      while (!signal.aborted) {
        await changed.next(signal);
        if (signal.aborted) return;
        const now = await this.read(conversation);
        if (now.eventCount <= seen) continue;
        const recorded = eventsToReport(await this.events.readStream(conversation), seen, now.eventCount);
        for (const change of changesOf(recorded, now)) yield change;
        seen = recorded.length > 0 ? recorded[recorded.length - 1].streamPosition : seen;
      }
    } finally {
      unfollow();
    }
  }

  private async read(conversation: ConversationKey): Promise<WatchedConversationState> {
    const state = await this.reader.read(conversation);
    if (state.erased) throw new AppError(ErrorCode.NotFound, `conversation ${conversation.conversationId} was erased`);
    return state;
  }
}
