import {
  type ConversationChange,
  type ConversationKey,
  type ConversationWatchReader,
  snapshotParts,
  type WatchedConversationState,
  type WatchedInvocation,
  watchedInvocations,
} from '@toolhistory/domain';
import { checkRequestIds, requireArguments } from '@toolhistory/errors';
import { type ConversationChangeHub, erasedError } from './conversation-change-hub';
import { type AwaitRecorded, awaitRecordedWith, type ReadAfter, READ_MODEL } from '../consistency/await-recorded';

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
 * 0. wait for the caller's own events (its consistency token);
 * 1. join the conversation's shared reads (before reading, so no change committed meanwhile is missed);
 * 2. read its rows and their event count in one read, and send them as the snapshot;
 * 3. take the changes the shared reads give of the events after that count, and send them;
 * 4. end with NOT_FOUND when the conversation is erased.
 */
export class WatchConversation {
  constructor(
    private readonly reader: ConversationWatchReader,
    private readonly hub: ConversationChangeHub,
    private readonly partBytes = SNAPSHOT_PART_BYTES,
    private readonly awaitRecorded?: AwaitRecorded,
  ) {}

  /** Throws INVALID_ARGUMENT before anything is read; the iterable ends when `signal` aborts. */
  execute(request: ConversationKey & { readAfter?: ReadAfter }, signal: AbortSignal): AsyncIterable<WatchMessage> {
    requireArguments({ tenant_id: request.tenantId, conversation_id: request.conversationId });
    checkRequestIds({ tenant_id: request.tenantId, conversation_id: request.conversationId });
    return this.follow({ tenantId: request.tenantId, conversationId: request.conversationId }, request.readAfter, signal);
  }

  private async *follow(
    conversation: ConversationKey,
    readAfter: ReadAfter | undefined,
    signal: AbortSignal,
  ): AsyncGenerator<WatchMessage> {
    await awaitRecordedWith(this.awaitRecorded, readAfter, READ_MODEL, signal);
    const watch = this.hub.join(conversation);
    try {
      const first = await this.read(conversation);
      // Taking changes at once: they wait while the snapshot is written.
      watch.ready(first.eventCount);
      const parts = snapshotParts(watchedInvocations(first), this.partBytes, sizeOf);
      for (const [i, invocations] of parts.entries()) yield { kind: 'snapshot', invocations, complete: i === parts.length - 1 };
      while (!signal.aborted) {
        for (const change of await watch.next(signal)) yield change;
      }
    } finally {
      watch.leave();
    }
  }

  private async read(conversation: ConversationKey): Promise<WatchedConversationState> {
    const state = await this.reader.read(conversation);
    if (state.erased) throw erasedError(conversation);
    return state;
  }
}
