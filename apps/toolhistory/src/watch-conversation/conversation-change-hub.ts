import {
  changeBatchOf,
  changeNotified,
  type ConversationChange,
  type ConversationChangeWatcher,
  type ConversationKey,
  conversationKeyString,
  type ConversationWatchReader,
  nextRead,
  NO_SHARED_READS,
  readEnded,
  readFailed,
  type SharedReads,
  unfollowed,
  watchJoined,
  watchLeft,
  watchPaused,
  watchTaking,
} from '@toolhistory/domain';
import { AppError, ErrorCode } from '@toolhistory/errors';

/** Past this many changes not yet taken, a watch stops taking more until it has caught up (then it reads from where it stopped). */
export const MAX_QUEUED_CHANGES = 1_000;

export const erasedError = (conversation: ConversationKey) =>
  new AppError(ErrorCode.NotFound, `conversation ${conversation.conversationId} was erased`);

/** One conversation's watches and the reads they share. */
interface FollowedConversation {
  key: ConversationKey;
  reads: SharedReads;
  watches: Map<string, JoinedWatch>;
}

/**
 * Follows the read model's change notifications for the conversations
 * being watched, and reads each one's changes once for all its watches
 * (libs/domain/src/watch/shared-reads.ts): one read at a time per
 * conversation, of the events after the lowest position a watch has been
 * given and the rows they touch; notifications during a read make one more
 * read after it. After a gap in the feed (stale, then current again) or a
 * rebuild, every followed conversation is read again: a change may have
 * gone unreported.
 */
export class ConversationChangeHub implements ConversationChangeWatcher {
  private readonly followed = new Map<string, FollowedConversation>();
  private nextWatch = 0;

  constructor(
    private readonly reader: ConversationWatchReader,
    private readonly maxQueued = MAX_QUEUED_CHANGES,
  ) {}

  /** Follows the conversation from now on; the watch takes changes once given its snapshot's position (`JoinedWatch.ready`). */
  join(conversation: ConversationKey): JoinedWatch {
    const key = conversationKeyString(conversation);
    let followed = this.followed.get(key);
    if (!followed) {
      followed = { key: conversation, reads: NO_SHARED_READS, watches: new Map() };
      this.followed.set(key, followed);
    }
    const id = String(this.nextWatch++);
    const shared = followed;
    const watch = new JoinedWatch({
      ready: (position) => this.update(shared, watchTaking(shared.reads, id, position)),
      paused: () => this.update(shared, watchPaused(shared.reads, id)),
      resumed: () => this.update(shared, watchTaking(shared.reads, id)),
      left: () => {
        shared.watches.delete(id);
        this.update(shared, watchLeft(shared.reads, id));
      },
      maxQueued: this.maxQueued,
    });
    shared.watches.set(id, watch);
    shared.reads = watchJoined(shared.reads, id);
    return watch;
  }

  /** How many conversations are followed (for tests: a conversation nobody watches is forgotten). */
  get followedCount(): number {
    return this.followed.size;
  }

  changed(keys: readonly ConversationKey[]): void {
    for (const key of keys) {
      const followed = this.followed.get(conversationKeyString(key));
      if (followed) this.update(followed, changeNotified(followed.reads));
    }
  }

  changedAll(): void {
    for (const followed of this.followed.values()) this.update(followed, changeNotified(followed.reads));
  }

  current(): void {
    this.changedAll();
  }

  stale(): void {
    // Nothing to do until the feed is current again (then every conversation is read).
  }

  /** Takes the new state, starts the read it calls for, and forgets a conversation nobody follows any more. */
  private update(followed: FollowedConversation, reads: SharedReads): void {
    followed.reads = reads;
    const started = nextRead(reads);
    if (started) {
      followed.reads = started.reads;
      void this.read(followed, started.after);
    }
    if (unfollowed(followed.reads) && this.followed.get(conversationKeyString(followed.key)) === followed) {
      this.followed.delete(conversationKeyString(followed.key));
    }
  }

  private async read(followed: FollowedConversation, after: number): Promise<void> {
    try {
      const update = await this.reader.readSince(followed.key, after);
      if (update.erased) throw erasedError(followed.key);
      const { reads, deliveries } = readEnded(followed.reads, changeBatchOf(after, update));
      followed.reads = reads;
      for (const { watch, changes } of deliveries) followed.watches.get(watch)?.give(changes);
    } catch (error) {
      const { reads, ended } = readFailed(followed.reads);
      followed.reads = reads;
      for (const id of ended) {
        followed.watches.get(id)?.end(error);
        followed.watches.delete(id);
      }
    }
    this.update(followed, followed.reads);
  }
}

interface JoinedWatchEvents {
  ready(position: number): void;
  paused(): void;
  resumed(): void;
  left(): void;
  maxQueued: number;
}

/** One watch's place in its conversation's shared reads: the changes given to it, waiting to be taken. */
export class JoinedWatch {
  private queued: ConversationChange[] = [];
  private failure: { error: unknown } | null = null;
  private paused = false;
  private gone = false;
  private wake: (() => void) | null = null;

  constructor(private readonly hub: JoinedWatchEvents) {}

  /** Its snapshot stands at this stream position: it takes the changes of the events after it. */
  ready(position: number): void {
    this.hub.ready(position);
  }

  /** The changes given since the last call, in order; waits for some; throws the error that ended the watch; [] once aborted. */
  async next(signal: AbortSignal): Promise<ConversationChange[]> {
    while (this.queued.length === 0 && !this.failure && !signal.aborted) {
      if (this.paused) {
        this.paused = false;
        this.hub.resumed();
        continue;
      }
      await new Promise<void>((resolve) => {
        const done = () => {
          signal.removeEventListener('abort', done);
          this.wake = null;
          resolve();
        };
        this.wake = done;
        signal.addEventListener('abort', done, { once: true });
      });
    }
    if (signal.aborted) return [];
    if (this.queued.length > 0) {
      const taken = this.queued;
      this.queued = [];
      return taken;
    }
    throw this.failure!.error;
  }

  /** Idempotent. */
  leave(): void {
    if (this.gone) return;
    this.gone = true;
    this.hub.left();
  }

  /** @internal the hub gives the changes of a shared read. */
  give(changes: ConversationChange[]): void {
    this.queued.push(...changes);
    if (!this.paused && this.queued.length > this.hub.maxQueued) {
      this.paused = true;
      this.hub.paused();
    }
    this.wake?.();
  }

  /** @internal the hub ends the watch (erasure, a failed read): after what it was given. */
  end(error: unknown): void {
    this.failure = { error };
    this.gone = true;
    this.wake?.();
  }
}
