import type { ConversationKey } from '../projection/read-model-keys';
import type { ProgressNotice } from '../consistency/recording-progress';

/**
 * What a feed of read-model changes tells its watcher. Between `stale` and
 * the next `current`, changes may go unreported; from `current` on, every
 * change committed after it is reported.
 */
export interface ConversationChangeWatcher {
  /** These conversations' rows changed (or were erased). */
  changed(keys: readonly ConversationKey[]): void;
  /** Every conversation's rows may have changed (the read model was rebuilt). */
  changedAll(): void;
  current(): void;
  stale(): void;
  /** Recording or a projection moved on (reported after the changes it committed with). */
  progressed?(notice: ProgressNotice): void;
}

/** Pushes read-model changes to readers that cache, so a cached conversation needs no check while the feed is current. */
export interface ConversationChanges {
  /** Starts reporting to the watcher; a feed reports to one watcher. */
  watch(watcher: ConversationChangeWatcher): void;
  close(): Promise<void>;
}
