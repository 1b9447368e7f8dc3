import { LRUCache } from 'lru-cache';
import {
  type ConversationChanges,
  conversationKeyString,
  type ConversationRows,
  type ReplayHistory,
  type ReplayPolicy,
  type ReplayReader,
  type ReadConversationOptions,
  type ReplayRequest,
  replayValidity,
} from '@toolhistory/domain';

export interface CachingReplayReaderOptions {
  /** Upper bound of the conversations' rows and the histories kept with them. */
  cacheBytes: number;
  /**
   * Pushes changes of cached conversations: while it is current, a cached
   * conversation is served without asking the database; without it (or
   * while it is not current) each hit costs a version check.
   */
  changes?: ConversationChanges;
}

/** What the cache holds, and how requests were answered since start. */
export interface ReplayCacheStats {
  bytes: number;
  conversations: number;
  histories: number;
  /** Whether read-model change notifications are heard now. */
  feedCurrent: boolean;
  historyHits: number;
  rowHits: number;
  reads: number;
  versionChecks: number;
  refused: number;
}

/** Computed histories kept beside the rows they came from (docs/adr/004-replay-cache.md). */
export interface ReplayHistoryMemo {
  /** A history computed before for these rows and this request, if `asOf` is still where it cannot have changed. */
  recall(rows: ConversationRows, request: ReplayRequest): ReplayHistory | undefined;
  /** Keeps a computed history with its rows (weighed in the cache's bound), and gives it back. */
  keep(rows: ConversationRows, request: ReplayRequest, history: ReplayHistory): ReplayHistory;
}

interface CachedHistory {
  from: number;
  until: number;
  history: ReplayHistory;
  /** What the computed history holds, as counted against the cache's bytes. */
  bytes: number;
}

interface CachedConversation {
  key: string;
  rows: ConversationRows;
  /** The change feed's epoch in which the rows were known current; they stay so until a change is heard, or the epoch ends. */
  currentIn: number;
  histories: Map<string, CachedHistory>;
  /** The rows and every history kept with them: what the entry weighs in the cache. */
  bytes: number;
}

/** A database request in flight for one conversation: whether a change of it was heard meanwhile. */
interface Lookup {
  epoch: number;
  changed: boolean;
}

/**
 * Request shapes (channel, format, window, stale mode, token budget) kept per
 * conversation: callers that vary them cannot make one entry grow without
 * end; the oldest shape goes first.
 */
const MAX_HISTORIES_PER_CONVERSATION = 16;

const NOT_CURRENT = -1;

/** A history's weight: its text, two bytes a character, as V8 keeps most strings. */
const historyBytes = (history: ReplayHistory): number => 2 * JSON.stringify(history).length;

/** The parts of a request that change its answer, besides the rows and `asOf` (the branch as JSON: its ids may hold any character). */
const shapeOf = (request: ReplayRequest): string =>
  [
    request.channel,
    request.format,
    request.freshnessWindowSeconds ?? '',
    request.staleResults ?? '',
    request.maxHistoryTokens ?? '',
    request.branchMessageIds?.length ? JSON.stringify(request.branchMessageIds) : '',
    request.model ?? '',
    request.provider ?? '',
  ].join('\u0000');

/**
 * The replay reader with a byte-weighed cache in front: while the change
 * feed is current, a cached conversation is current until a change of it is
 * heard; otherwise one primary-key lookup of its version confirms it. Rows
 * read while a change of them was heard are not trusted without a check (the
 * change may have committed after the read's snapshot). Computed histories
 * are kept with their rows (ReplayHistoryMemo), reused while `asOf` stays
 * inside the stretch of time over which they cannot change.
 */
export class CachingReplayReader implements ReplayReader, ReplayHistoryMemo {
  private readonly cache: LRUCache<string, CachedConversation>;
  /** The entry each cached rows object belongs to, so a history finds its place by the rows it came from. */
  private readonly entries = new WeakMap<ConversationRows, CachedConversation>();
  private readonly answered = { historyHits: 0, cachedRows: 0, reads: 0, versionChecks: 0 };
  /** Whether the change feed reports every change now; `epoch` counts its turns between current and not. */
  private feedCurrent = false;
  private epoch = 0;
  private readonly lookups = new Map<string, Set<Lookup>>();

  constructor(
    private readonly reader: ReplayReader,
    private readonly policy: ReplayPolicy,
    options: CachingReplayReaderOptions,
  ) {
    this.cache = new LRUCache<string, CachedConversation>({
      maxSize: options.cacheBytes,
      sizeCalculation: (entry) => Math.max(1, entry.bytes),
    });
    options.changes?.watch({
      changed: (keys) => keys.forEach((k) => this.forget(conversationKeyString(k))),
      changedAll: () => {
        this.cache.clear();
        for (const key of this.lookups.keys()) this.forget(key);
      },
      current: () => this.turnFeed(true),
      stale: () => this.turnFeed(false),
    });
  }

  /**
   * The conversation's rows: from the cache when they are known current (a
   * change feed that heard nothing of it since), or confirmed by their
   * version; else read. The same rows object is given while it is current.
   */
  async readConversation(
    tenantId: string,
    conversationId: string,
    signal?: AbortSignal,
    options: ReadConversationOptions = {},
  ): Promise<ConversationRows | null> {
    const key = conversationKeyString({ tenantId, conversationId });
    const cached = this.cache.get(key);
    if (cached && !options.verify && this.feedCurrent && cached.currentIn === this.epoch) return this.served(cached);
    const lookup = this.startLookup(key);
    try {
      if (cached) {
        this.answered.versionChecks += 1;
        const version = await this.reader.conversationVersion(tenantId, conversationId, signal);
        if (version === cached.rows.version) {
          cached.currentIn = this.currentIn(lookup);
          return this.served(cached);
        }
        if (this.cache.peek(key) === cached) this.cache.delete(key);
        if (version === null) return null;
      }
      const rows = await this.reader.readConversation(tenantId, conversationId, signal);
      if (rows === null) return null;
      this.answered.reads += 1;
      const entry: CachedConversation = { key, rows, currentIn: this.currentIn(lookup), histories: new Map(), bytes: rows.approxBytes };
      this.cache.set(key, entry);
      this.entries.set(rows, entry);
      return rows;
    } finally {
      this.endLookup(key, lookup);
    }
  }

  conversationVersion(tenantId: string, conversationId: string, signal?: AbortSignal): Promise<string | null> {
    return this.reader.conversationVersion(tenantId, conversationId, signal);
  }

  recall(rows: ConversationRows, request: ReplayRequest): ReplayHistory | undefined {
    const cached = this.entries.get(rows)?.histories.get(shapeOf(request));
    if (cached === undefined || request.asOf < cached.from || request.asOf >= cached.until) return undefined;
    this.answered.historyHits += 1;
    return cached.history;
  }

  keep(rows: ConversationRows, request: ReplayRequest, history: ReplayHistory): ReplayHistory {
    const entry = this.entries.get(rows);
    // Rows no longer cached (evicted, or changed meanwhile) keep nothing with them.
    if (entry === undefined || this.cache.peek(entry.key) !== entry) return history;
    const key = shapeOf(request);
    const computed = { ...replayValidity(request, rows.runs, rows.invocations, this.policy), history, bytes: historyBytes(history) };
    const previous = entry.histories.get(key);
    if (previous) entry.bytes -= previous.bytes;
    entry.histories.delete(key);
    entry.histories.set(key, computed);
    entry.bytes += computed.bytes;
    for (const [oldKey, old] of entry.histories) {
      if (entry.histories.size <= MAX_HISTORIES_PER_CONVERSATION) break;
      entry.histories.delete(oldKey);
      entry.bytes -= old.bytes;
    }
    // Put in again, so the cache weighs the entry anew (and drops others, or this one, to stay within its
    // bytes): lru-cache keeps the old weight when the same object is set again.
    this.cache.delete(entry.key);
    this.cache.set(entry.key, entry);
    return history;
  }

  /**
   * What the cache holds (in the bytes it counts), and how requests for a
   * known conversation were answered since start: from a cached history,
   * from cached rows (current by the feed, or after a version check), or by
   * reading the rows. `refused` is the request limit's, below the cache.
   */
  stats(refused = 0): ReplayCacheStats {
    let histories = 0;
    for (const entry of this.cache.values()) histories += entry.histories.size;
    const { historyHits, cachedRows, reads, versionChecks } = this.answered;
    return {
      bytes: this.cache.calculatedSize,
      conversations: this.cache.size,
      histories,
      feedCurrent: this.feedCurrent,
      historyHits,
      // A cached history is always recalled from cached rows.
      rowHits: cachedRows - historyHits,
      reads,
      versionChecks,
      refused,
    };
  }

  private served(entry: CachedConversation): ConversationRows {
    this.answered.cachedRows += 1;
    return entry.rows;
  }

  private startLookup(key: string): Lookup {
    const lookup: Lookup = { epoch: this.feedCurrent ? this.epoch : NOT_CURRENT, changed: false };
    const open = this.lookups.get(key);
    if (open) open.add(lookup);
    else this.lookups.set(key, new Set([lookup]));
    return lookup;
  }

  private endLookup(key: string, lookup: Lookup): void {
    const open = this.lookups.get(key);
    open?.delete(lookup);
    if (open?.size === 0) this.lookups.delete(key);
  }

  /**
   * The epoch in which what a lookup saw is known current: the one it began
   * in, if the feed was current then, still is, and heard no change of the
   * conversation meanwhile (a change committed after the lookup's snapshot
   * would otherwise be missed).
   */
  private currentIn(lookup: Lookup): number {
    return lookup.epoch === this.epoch && this.feedCurrent && !lookup.changed ? lookup.epoch : NOT_CURRENT;
  }

  private forget(key: string): void {
    this.cache.delete(key);
    for (const lookup of this.lookups.get(key) ?? []) lookup.changed = true;
  }

  private turnFeed(current: boolean): void {
    this.feedCurrent = current;
    this.epoch += 1;
  }
}
