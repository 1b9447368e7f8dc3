import type { ConversationChanges, ConversationChangeWatcher, ConversationKey, ProgressNotice } from '@toolhistory/domain';

/**
 * One change feed for several watchers, each told every notice: those that
 * joined with `watch` first, then those that joined with `watchLast`. The
 * recording progress joins last, so by the time a reader hears that its
 * events are recorded, the replay cache has dropped the rows they changed.
 * A watcher that joins late is told whether the feed is current.
 */
export class SharedConversationChanges implements ConversationChanges {
  private readonly first: ConversationChangeWatcher[] = [];
  private readonly last: ConversationChangeWatcher[] = [];
  private started = false;
  private current = false;

  constructor(private readonly feed: ConversationChanges) {}

  /** Whether the feed reports every change now. */
  get isCurrent(): boolean {
    return this.current;
  }

  watch(watcher: ConversationChangeWatcher): void {
    this.join(this.first, watcher);
  }

  /** Told every notice after every watcher that joined with `watch`. */
  watchLast(watcher: ConversationChangeWatcher): void {
    this.join(this.last, watcher);
  }

  close(): Promise<void> {
    return this.feed.close();
  }

  private get watchers(): ConversationChangeWatcher[] {
    return [...this.first, ...this.last];
  }

  private join(list: ConversationChangeWatcher[], watcher: ConversationChangeWatcher): void {
    list.push(watcher);
    if (this.current) watcher.current();
    if (this.started) return;
    this.started = true;
    this.feed.watch({
      changed: (keys: readonly ConversationKey[]) => this.watchers.forEach((w) => w.changed(keys)),
      changedAll: () => this.watchers.forEach((w) => w.changedAll()),
      current: () => {
        this.current = true;
        this.watchers.forEach((w) => w.current());
      },
      stale: () => {
        this.current = false;
        this.watchers.forEach((w) => w.stale());
      },
      progressed: (notice: ProgressNotice) => this.watchers.forEach((w) => w.progressed?.(notice)),
    });
  }
}
