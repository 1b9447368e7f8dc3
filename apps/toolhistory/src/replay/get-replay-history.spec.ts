import { ConversationChanges, ConversationChangeWatcher, ConversationRows, DEFAULT_REPLAY_POLICY, ReplayReader } from '@toolhistory/domain';
import { AppError, ErrorCode } from '@toolhistory/errors';
import { readModelOf } from '../../../../libs/domain/src/replay/replay-test-support.fixture';
import { testTokens } from '../../../../libs/domain/src/projection/test-tokens.fixture';
import { runCompleted, toolCall, toolResult } from '../../../../test/support/tool-event-factory';
import { withinBudget } from '../within-budget';
import { replayReading, type ReplayReadingOptions } from './replay-reading';
import { cacheReport } from './replay-cache-report';

const T0 = Date.parse('2026-03-01T12:00:00.000Z');
const iso = (s: number) => new Date(T0 + s * 1000).toISOString();
const scope = { tenantId: 't', conversationId: 'c', runId: 'r', channel: 'web' };
const events = [
  toolCall(scope, { roundIndex: 0, sequenceIndex: 0, toolCallId: 'a', occurredAt: iso(0) }),
  toolResult(scope, { roundIndex: 0, sequenceIndex: 0, toolCallId: 'a', occurredAt: iso(1) }),
  runCompleted(scope, { occurredAt: iso(2) }),
];

/** An in-memory reader that counts its reads (unit test of the caching logic only). */
class CountingReader implements ReplayReader {
  full = 0;
  versionChecks = 0;
  rows: ConversationRows | null = { channel: 'web', version: '3', approxBytes: 1_000, ...readModelOf(events) };
  delayMs = 0;
  /** When set, reads wait for it. */
  gate?: Promise<void>;
  async readConversation() {
    this.full += 1;
    await new Promise((r) => setTimeout(r, this.delayMs));
    await this.gate;
    return this.rows && { ...this.rows };
  }
  async conversationVersion() {
    this.versionChecks += 1;
    await new Promise((r) => setTimeout(r, this.delayMs));
    return this.rows?.version ?? null;
  }
}

/** A change feed driven by the test. */
class ScriptedChanges implements ConversationChanges {
  watcher!: ConversationChangeWatcher;
  watch(watcher: ConversationChangeWatcher): void {
    this.watcher = watcher;
  }
  async close(): Promise<void> {}
}

/** The use case as the service wires it (request limit, cache), with the cache's figures. */
type Replay = ReturnType<typeof replayWith>;
function replayWith(reader: ReplayReader, options: ReplayReadingOptions) {
  const { replay, cacheStats } = replayReading(reader, DEFAULT_REPLAY_POLICY, options);
  return { execute: replay.execute.bind(replay), cacheStats };
}

describe('GetReplayHistory', () => {
  let now = T0 + 10_000;
  let reader: CountingReader;
  let useCase: Replay;
  const query = { tenantId: 't', conversationId: 'c', format: 'openai_chat' as const };

  beforeEach(() => {
    now = T0 + 10_000;
    reader = new CountingReader();
    useCase = replayWith(reader, { tokens: testTokens, cacheBytes: 1_000_000, now: () => now });
  });

  it('refuses ids no event could have (over 256 characters, or holding NUL), naming them', async () => {
    await expect(useCase.execute({ ...query, tenantId: 'x'.repeat(257), conversationId: 'a\u0000b' })).rejects.toMatchObject({
      code: ErrorCode.InvalidArgument,
      message: 'tenant_id must be at most 256 characters; conversation_id must not contain NUL characters',
    });
    expect(reader.full + reader.versionChecks).toBe(0);
  });

  it('names the missing fields', async () => {
    await expect(useCase.execute({ ...query, tenantId: '', conversationId: '' })).rejects.toMatchObject({
      code: ErrorCode.InvalidArgument,
      message: 'tenant_id and conversation_id are required',
    });
  });

  it('reads a conversation once, then only checks its version while it is unchanged', async () => {
    const first = await useCase.execute(query);
    const second = await useCase.execute(query);
    expect(second).toBe(first);
    expect(reader.full).toBe(1);
    expect(reader.versionChecks).toBe(1);
  });

  it('counts how each request was answered: a cached history, cached rows after a version check, or a read', async () => {
    await useCase.execute(query); // read
    await useCase.execute(query); // same shape, version unchanged: the cached history
    await useCase.execute({ ...query, format: 'anthropic_messages' }); // cached rows, a new shape computed
    reader.rows = { ...reader.rows!, version: '4' };
    await useCase.execute(query); // version moved: read again
    expect(useCase.cacheStats()).toMatchObject({ historyHits: 1, rowHits: 1, reads: 2, conversations: 1, histories: 1 });
    expect(reader.full).toBe(2);
    // What the service logs each minute: the change since the last report, and the share the cache answered.
    const before = useCase.cacheStats();
    await useCase.execute(query);
    await useCase.execute(query);
    expect(cacheReport(before, useCase.cacheStats())).toMatchObject({
      requests: 2,
      historyHits: 2,
      rowHits: 0,
      reads: 0,
      versionChecks: 2,
      refused: 0,
      hitRate: 1,
    });
    expect(cacheReport(before, before).hitRate).toBeNull();
  });

  it('reads again when the version changed', async () => {
    await useCase.execute(query);
    reader.rows = { ...reader.rows!, version: '4' };
    await useCase.execute(query);
    expect(reader.full).toBe(2);
  });

  it('recomputes once as_of passes a freshness boundary, with the same rows', async () => {
    const fresh = await useCase.execute(query);
    expect(fresh.turns).toHaveLength(1);
    now = T0 + 1_000 + 300_000 + 1; // the result (at +1 s) is older than 300 s from here on
    const stale = await useCase.execute(query);
    expect(stale.turns).toHaveLength(0);
    expect(stale.omitted.map((o) => o.reason)).toEqual(['stale']);
    expect(reader.full).toBe(1);
  });

  it('answers a conversation that disappeared as unknown', async () => {
    await useCase.execute(query);
    reader.rows = null;
    expect(await useCase.execute(query)).toEqual({ turns: [], omitted: [], pendingApprovals: [], historyTokens: 0 });
  });

  it("fails DEADLINE_EXCEEDED once the edge's budget is spent, rather than late, and aborts the read", async () => {
    const slow = replayWith(reader, { tokens: testTokens, cacheBytes: 0 });
    reader.delayMs = 200;
    const started = Date.now();
    const signals: AbortSignal[] = [];
    const within50ms = () => withinBudget('GetReplayHistory', 50, (signal) => (signals.push(signal), slow.execute(query, signal)));
    await expect(within50ms()).rejects.toEqual(expect.any(AppError));
    await expect(within50ms()).rejects.toMatchObject({ code: ErrorCode.DeadlineExceeded, retriable: true });
    expect(Date.now() - started).toBeLessThan(190 * 2);
    expect(signals.map((s) => s.aborted)).toEqual([true, true]);
  });

  it('works without a cache', async () => {
    const uncached = replayWith(reader, { tokens: testTokens, cacheBytes: 0, now: () => now });
    await uncached.execute(query);
    await uncached.execute(query);
    expect(reader.full).toBe(2);
    expect(reader.versionChecks).toBe(0);
  });

  it('stays within its bytes whatever callers vary (channel, window, format), counting every history it keeps', async () => {
    const cacheBytes = 60_000;
    const bounded = replayWith(reader, { tokens: testTokens, cacheBytes, now: () => now });
    const conversations = ['c1', 'c2', 'c3', 'c4', 'c5'];
    for (let i = 0; i < 2_000; i += 1) {
      await bounded.execute({
        tenantId: 't',
        conversationId: conversations[i % conversations.length],
        channel: `channel-${i % 37}`,
        freshnessWindowSeconds: 60 + (i % 101),
        format: i % 2 ? 'openai_chat' : 'anthropic_messages',
      });
      const stats = bounded.cacheStats();
      expect(stats.bytes).toBeLessThanOrEqual(cacheBytes);
    }
    const stats = bounded.cacheStats();
    // Histories are kept and weighed: the cache holds more than the rows alone would weigh.
    expect(stats.histories).toBeGreaterThan(0);
    expect(stats.histories).toBeLessThanOrEqual(16 * stats.conversations);
    expect(stats.bytes).toBeGreaterThan(stats.conversations * 1_000);
  });

  describe('with a change feed', () => {
    let feed: ScriptedChanges;
    let fed: Replay;
    const other = { ...query, format: 'anthropic_messages' as const };

    beforeEach(() => {
      feed = new ScriptedChanges();
      fed = replayWith(reader, {
        tokens: testTokens,
        cacheBytes: 1_000_000,
        now: () => now,
        changes: feed,
      });
      feed.watcher.current();
    });

    it('serves a cached conversation without asking the database until a change of it is heard', async () => {
      await fed.execute(query);
      await fed.execute(query);
      await fed.execute(other);
      expect([reader.full, reader.versionChecks]).toEqual([1, 0]);
      feed.watcher.changed([{ tenantId: 't', conversationId: 'someone-else' }]);
      await fed.execute(query);
      expect([reader.full, reader.versionChecks]).toEqual([1, 0]);
      reader.rows = { ...reader.rows!, version: '4', invocations: [] };
      feed.watcher.changed([{ tenantId: 't', conversationId: 'c' }]);
      expect((await fed.execute(query)).turns).toHaveLength(0);
      expect([reader.full, reader.versionChecks]).toEqual([2, 0]);
    });

    it('checks versions while the feed is not current, and trusts again only rows confirmed after it is', async () => {
      await fed.execute(query);
      feed.watcher.stale();
      await fed.execute(query);
      await fed.execute(query);
      expect([reader.full, reader.versionChecks]).toEqual([1, 2]);
      feed.watcher.current(); // changes while it was not current were not heard: one check, then trusted
      await fed.execute(query);
      await fed.execute(query);
      expect([reader.full, reader.versionChecks]).toEqual([1, 3]);
      expect(fed.cacheStats()).toMatchObject({ feedCurrent: true, versionChecks: 3 });
    });

    it('does not trust rows read while a change of them was heard', async () => {
      let release!: () => void;
      reader.gate = new Promise((r) => (release = r));
      const reading = fed.execute(query);
      feed.watcher.changed([{ tenantId: 't', conversationId: 'c' }]); // committed after the read's snapshot, maybe
      release();
      reader.gate = undefined;
      await reading;
      await fed.execute(query);
      expect([reader.full, reader.versionChecks]).toEqual([1, 1]);
      await fed.execute(query); // confirmed by the check, with nothing heard meanwhile
      expect([reader.full, reader.versionChecks]).toEqual([1, 1]);
    });

    it('drops every cached conversation when the read model was rebuilt', async () => {
      await fed.execute(query);
      await fed.execute({ ...query, conversationId: 'c2' });
      feed.watcher.changedAll();
      expect(fed.cacheStats().conversations).toBe(0);
      await fed.execute(query);
      expect(reader.full).toBe(3);
    });
  });

  it('refuses database requests beyond its limit with a retriable RESOURCE_EXHAUSTED, while cached answers go on', async () => {
    const feed = new ScriptedChanges();
    const limited = replayWith(reader, {
      tokens: testTokens,
      cacheBytes: 1_000_000,
      now: () => now,
      changes: feed,
      maxDatabaseRequests: 2,
    });
    feed.watcher.current();
    await limited.execute(query);
    reader.delayMs = 50;
    const waiting = [limited.execute({ ...query, conversationId: 'c2' }), limited.execute({ ...query, conversationId: 'c3' })];
    await expect(limited.execute({ ...query, conversationId: 'c4' })).rejects.toMatchObject({
      code: ErrorCode.ResourceExhausted,
      retriable: true,
      message: 'replay has 2 database requests in flight, its limit; retry after a backoff',
    });
    expect((await limited.execute(query)).turns).toHaveLength(1);
    await Promise.all(waiting);
    await limited.execute({ ...query, conversationId: 'c4' });
    expect(limited.cacheStats()).toMatchObject({ refused: 1, reads: 4 });
  });

  describe('with a consistency token', () => {
    const token = { token: 'ct1:k:agent.tool-events:0:3', waitMs: 1_000 };

    it('waits for the token before it reads, and checks cached rows when the token was learned from the database', async () => {
      const feed = new ScriptedChanges();
      const waited: unknown[] = [];
      let verify = false;
      const awaiting = replayWith(reader, {
        tokens: testTokens,
        cacheBytes: 1_000_000,
        now: () => now,
        changes: feed,
        awaitRecorded: async (readAfter, need) => {
          waited.push([readAfter?.token, need.kind]);
          return { verify };
        },
      });
      feed.watcher.current();
      await awaiting.execute({ ...query, readAfter: token });
      await awaiting.execute({ ...query, readAfter: token });
      expect([reader.full, reader.versionChecks]).toEqual([1, 0]);
      verify = true;
      await awaiting.execute({ ...query, readAfter: token });
      expect([reader.full, reader.versionChecks]).toEqual([1, 1]);
      expect(waited).toEqual(Array.from({ length: 3 }, () => [token.token, 'read-model']));
    });

    it('refuses a token it has nothing to wait with, rather than answer without the events', async () => {
      await expect(useCase.execute({ ...query, readAfter: token })).rejects.toMatchObject({ code: ErrorCode.NotSupported });
      expect(reader.full).toBe(0);
    });

    it('refuses a branch id no message can have', async () => {
      await expect(useCase.execute({ ...query, branchMessageIds: ['m1', ''] })).rejects.toMatchObject({
        code: ErrorCode.InvalidArgument,
        message: 'branch_message_ids[1] is empty',
      });
      await expect(useCase.execute({ ...query, branchMessageIds: ['x'.repeat(257)] })).rejects.toMatchObject({
        message: 'branch_message_ids[0] must be at most 256 characters',
      });
    });
  });
});
