import { type ConversationChangeWatcher, type ConversationKey, conversationKeyString } from '@toolhistory/domain';

/**
 * Fans the read model's change notifications out to the watches of each
 * conversation. After a gap in the feed (stale, then current again) or a
 * rebuild, every watch looks again: a change may have gone unreported.
 */
export class ConversationChangeHub implements ConversationChangeWatcher {
  private readonly followers = new Map<string, Set<() => void>>();

  /** Calls `onChange` whenever the conversation's rows may have changed; the returned stop is idempotent. */
  follow(conversation: ConversationKey, onChange: () => void): () => void {
    const key = conversationKeyString(conversation);
    const followers = this.followers.get(key) ?? new Set<() => void>();
    followers.add(onChange);
    this.followers.set(key, followers);
    return () => {
      followers.delete(onChange);
      if (followers.size === 0 && this.followers.get(key) === followers) this.followers.delete(key);
    };
  }

  changed(keys: readonly ConversationKey[]): void {
    for (const key of keys) for (const onChange of this.followers.get(conversationKeyString(key)) ?? []) onChange();
  }

  changedAll(): void {
    for (const followers of this.followers.values()) for (const onChange of followers) onChange();
  }

  current(): void {
    this.changedAll();
  }

  stale(): void {
    // Nothing to do until the feed is current again (then everyone looks).
  }
}

/** A latch a watch waits on: set by any number of notifications, cleared by the wait that sees it. */
export class ChangeSignal {
  private pending = false;
  private wake: (() => void) | null = null;

  notify = (): void => {
    this.pending = true;
    this.wake?.();
  };

  /** Resolves once notified since the last wait (at once if already), or when `signal` aborts. */
  async next(signal: AbortSignal): Promise<void> {
    if (!this.pending && !signal.aborted) {
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
    this.pending = false;
  }
}
