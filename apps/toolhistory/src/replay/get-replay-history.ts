import { LRUCache } from 'lru-cache';
import {
  ConversationChanges,
  conversationKeyString,
  ConversationRows,
  HistoryFormat,
  replayHistory,
  ReplayHistory,
  ReplayPolicy,
  ReplayReader,
  replayValidity,
  StaleResultMode,
  TokenCounter,
} from '@toolhistory/domain';
import { AppError, ErrorCode, checkRequestIds, requireArguments } from '@toolhistory/errors';

export interface GetReplayHistoryQuery {
  tenantId: string;
  conversationId: string;
  channel?: string;
  /** Milliseconds since the epoch; undefined = now. */
  asOf?: number;
  format: HistoryFormat;
  freshnessWindowSeconds?: number;
  staleResults?: StaleResultMode;
  /** Replaces the policy's token budget. */
  maxHistoryTokens?: number;
  /** Milliseconds left before the caller's deadline; the answer is UNAVAILABLE rather than late. */
  budgetMs?: number;
}

export interface GetReplayHistoryOptions {
  /** Upper bound of the cache of conversations' rows and computed histories; 0 disables it. */
  cacheBytes: number;
  /** Counts what rows recorded before token counts were stored, and placeholder notices, take. */
  tokens: TokenCounter;
  /**
   * Pushes changes of cached conversations: while it is current, a cached
   * conversation is served without asking the database; without it (or
   * while it is not current) each hit costs a version check.
   */
  changes?: ConversationChanges;
  /**
   * Requests that may wait on the database at once (version checks and
   * reads); one more is refused with RESOURCE_EXHAUSTED at once rather
   * than queued behind them. Cached answers are never refused.
   */
  maxDatabaseRequests?: number;
  now?: () => number;
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

interface CachedHistory {
  from: number;
  until: number;
  history: ReplayHistory;
  /** What the computed history holds, as counted against the cache's bytes. */
  bytes: number;
}

interface CachedConversation {
  rows: ConversationRows;
  /** The change feed's epoch in which the rows were known current; they stay so until a change is heard, or the epoch ends. */
  currentIn: number;
  histories: Map<string, CachedHistory>;
  /** The rows and every history kept with them: what the entry weighs in the cache. */
  bytes: number;
}

/**
 * Request shapes (channel, format, window, stale mode, token budget) kept per
 * conversation: callers that vary them cannot make one entry grow without
 * end; the oldest shape goes first.
 */
const MAX_HISTORIES_PER_CONVERSATION = 16;

/** A history's weight: its text, two bytes a character, as V8 keeps most strings. */
const historyBytes = (history: ReplayHistory): number => 2 * JSON.stringify(history).length;

/** A database request in flight for one conversation: whether a change of it was heard meanwhile. */
interface Lookup {
  epoch: number;
  changed: boolean;
}

const NOT_CURRENT = -1;
const DEFAULT_MAX_DATABASE_REQUESTS = 256;

const EMPTY: ReplayHistory = Object.freeze({ turns: [], omitted: [], historyTokens: 0 }) as unknown as ReplayHistory;

/**
 * The turn-start query: validates, reads the conversation within the
 * caller's time budget, and applies the replay rules. Conversations are
 * cached: while the change feed is current, a cached one is current until a
 * change of it is heard; otherwise one primary-key lookup of its version
 * confirms it. A computed history is reused while as_of stays inside the
 * stretch of time over which it cannot change (docs/adr/004-replay-cache.md).
 */
export class GetReplayHistory {
  private readonly cache?: LRUCache<string, CachedConversation>;
  private readonly now: () => number;
  private readonly tokens: TokenCounter;
  private readonly maxDatabaseRequests: number;
  /** How requests were answered since start: a cached history, cached rows, or a read; and how many needed a version check or were refused. */
  private readonly answered = { historyHits: 0, rowHits: 0, reads: 0, versionChecks: 0, refused: 0 };
  /** Whether the change feed reports every change now; `epoch` counts its turns between current and not. */
  private feedCurrent = false;
  private epoch = 0;
  private readonly lookups = new Map<string, Set<Lookup>>();
  private databaseRequests = 0;

  constructor(
    private readonly reader: ReplayReader,
    private readonly policy: ReplayPolicy,
    options: GetReplayHistoryOptions,
  ) {
    this.now = options.now ?? Date.now;
    this.tokens = options.tokens;
    this.maxDatabaseRequests = options.maxDatabaseRequests ?? DEFAULT_MAX_DATABASE_REQUESTS;
    if (options.cacheBytes > 0) {
      this.cache = new LRUCache<string, CachedConversation>({
        maxSize: options.cacheBytes,
        sizeCalculation: (entry) => Math.max(1, entry.bytes),
      });
      options.changes?.watch({
        changed: (keys) => keys.forEach((k) => this.forget(conversationKeyString(k))),
        changedAll: () => {
          this.cache?.clear();
          for (const key of this.lookups.keys()) this.forget(key);
        },
        current: () => this.turnFeed(true),
        stale: () => this.turnFeed(false),
      });
    }
  }

  async execute(query: GetReplayHistoryQuery): Promise<ReplayHistory> {
    validate(query);
    const asOf = query.asOf ?? this.now();
    const deadline = query.budgetMs === undefined ? undefined : this.now() + query.budgetMs;
    const found = await this.conversation(query.tenantId, query.conversationId, deadline);
    if (found === null) return EMPTY;
    const { entry, read } = found;

    const channel = query.channel || entry.rows.channel;
    const key = [channel, query.format, query.freshnessWindowSeconds ?? '', query.staleResults ?? '', query.maxHistoryTokens ?? ''].join(
      '\u0000',
    );
    const cached = entry.histories.get(key);
    if (cached && asOf >= cached.from && asOf < cached.until) {
      this.answered.historyHits += 1;
      return cached.history;
    }
    if (read) this.answered.reads += 1;
    else this.answered.rowHits += 1;

    const request = {
      tenantId: query.tenantId,
      conversationId: query.conversationId,
      channel,
      asOf,
      format: query.format,
      freshnessWindowSeconds: query.freshnessWindowSeconds,
      staleResults: query.staleResults,
      maxHistoryTokens: query.maxHistoryTokens,
    };
    const { runs, invocations } = entry.rows;
    const history = replayHistory(request, runs, invocations, this.policy, this.tokens);
    if (this.cache)
      this.remember(query, entry, key, {
        ...replayValidity(request, runs, invocations, this.policy),
        history,
        bytes: historyBytes(history),
      });
    return history;
  }

  /**
   * What the cache holds (in the bytes it counts), and how requests for a
   * known conversation were answered since start: from a cached history,
   * from cached rows after a version check, or by reading the rows.
   */
  cacheStats(): ReplayCacheStats {
    let histories = 0;
    for (const entry of this.cache?.values() ?? []) histories += entry.histories.size;
    return {
      bytes: this.cache?.calculatedSize ?? 0,
      conversations: this.cache?.size ?? 0,
      histories,
      feedCurrent: this.feedCurrent,
      ...this.answered,
    };
  }

  /** Keeps a computed history with its conversation and weighs the entry again, so the cache's bound counts it. */
  private remember(query: GetReplayHistoryQuery, entry: CachedConversation, key: string, computed: CachedHistory): void {
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
    const cacheKey = conversationKeyString(query);
    // Put in again, so the cache weighs the entry anew (and drops others, or this one, to stay within its
    // bytes): lru-cache keeps the old weight when the same object is set again.
    if (this.cache?.peek(cacheKey) === entry) {
      this.cache.delete(cacheKey);
      this.cache.set(cacheKey, entry);
    }
  }

  /**
   * The conversation's rows: from the cache when they are known current (a
   * change feed that heard nothing of it since), or confirmed by their
   * version; else read (`read` true).
   */
  private async conversation(
    tenantId: string,
    conversationId: string,
    deadline: number | undefined,
  ): Promise<{ entry: CachedConversation; read: boolean } | null> {
    const key = conversationKeyString({ tenantId, conversationId });
    const cached = this.cache?.get(key);
    if (cached && this.feedCurrent && cached.currentIn === this.epoch) return { entry: cached, read: false };
    this.admitDatabaseRequest();
    const lookup = this.startLookup(key);
    // At the deadline the statement is cancelled in the database too, not left running for nobody.
    const signal = deadline === undefined ? undefined : AbortSignal.timeout(Math.max(1, deadline - this.now()));
    try {
      if (cached) {
        this.answered.versionChecks += 1;
        const version = await this.withinDeadline(this.reader.conversationVersion(tenantId, conversationId, signal), deadline);
        if (version === cached.rows.version) {
          cached.currentIn = this.currentIn(lookup);
          return { entry: cached, read: false };
        }
        if (this.cache!.peek(key) === cached) this.cache!.delete(key);
        if (version === null) return null;
      }
      const rows = await this.withinDeadline(this.reader.readConversation(tenantId, conversationId, signal), deadline);
      if (rows === null) return null;
      const entry: CachedConversation = { rows, currentIn: this.currentIn(lookup), histories: new Map(), bytes: rows.approxBytes };
      this.cache?.set(key, entry);
      return { entry, read: true };
    } finally {
      this.endLookup(key, lookup);
      this.databaseRequests -= 1;
    }
  }

  private admitDatabaseRequest(): void {
    if (this.databaseRequests >= this.maxDatabaseRequests) {
      this.answered.refused += 1;
      throw new AppError(
        ErrorCode.ResourceExhausted,
        `replay has ${this.maxDatabaseRequests} database requests in flight, its limit; retry after a backoff`,
      );
    }
    this.databaseRequests += 1;
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
    this.cache?.delete(key);
    for (const lookup of this.lookups.get(key) ?? []) lookup.changed = true;
  }

  private turnFeed(current: boolean): void {
    this.feedCurrent = current;
    this.epoch += 1;
  }

  private async withinDeadline<T>(work: Promise<T>, deadline: number | undefined): Promise<T> {
    if (deadline === undefined) return work;
    const budgetMs = deadline - this.now();
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () =>
          reject(
            new AppError(ErrorCode.StorageUnavailable, `the read model did not answer within ${Math.max(0, Math.round(budgetMs))} ms`, {}),
          ),
        Math.max(0, budgetMs),
      );
    });
    try {
      return await Promise.race([work, timeout]);
    } finally {
      clearTimeout(timer);
    }
  }
}

function validate(query: GetReplayHistoryQuery): void {
  requireArguments({ tenant_id: query.tenantId, conversation_id: query.conversationId });
  checkRequestIds({ tenant_id: query.tenantId, conversation_id: query.conversationId, channel: query.channel });
  if (query.freshnessWindowSeconds !== undefined && (!Number.isFinite(query.freshnessWindowSeconds) || query.freshnessWindowSeconds < 0)) {
    throw new AppError(ErrorCode.InvalidArgument, 'freshness_window_seconds must not be negative');
  }
  if (query.maxHistoryTokens !== undefined && !(Number.isInteger(query.maxHistoryTokens) && query.maxHistoryTokens >= 0)) {
    throw new AppError(ErrorCode.InvalidArgument, 'max_history_tokens must not be negative');
  }
}
