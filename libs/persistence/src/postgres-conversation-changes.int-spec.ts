import type { ToolEvent } from '../../contract/src';
import { type ConversationChangeWatcher, type ConversationKey, type ProgressNotice, START_POSITION } from '../../domain/src';
import { freshSchema, FreshSchema } from '../../../test/support/fresh-schema';
import { TcpProxy } from '../../../test/support/tcp-proxy';
import { TEST_DATABASE_URL } from '../../../test/support/test-environment';
import { toolCall, toolResult } from '../../../test/support/tool-event-factory';
import { waitFor } from '../../../test/support/wait-for';
import { inTransaction } from './in-transaction';
import { notifyConversationsChanged, PostgresConversationChanges } from './postgres-conversation-changes';
import { PostgresConversationEraser } from './postgres-conversation-eraser';
import { PostgresEventStore } from './postgres-event-store';
import { PostgresReadModelRebuilder } from './postgres-read-model-rebuild';
import { PostgresRecordingStore } from './postgres-recording-store';
import { PostgresReplayReader } from './postgres-replay-reader';
import { PostgresSearchProjection } from './postgres-search-projection';

/** What the feed told its watcher, in order. */
class HeardChanges implements ConversationChangeWatcher {
  readonly heard: string[] = [];
  /** Progress notices too (the read-your-writes tests), else changes alone. */
  constructor(private readonly withProgress = false) {}
  changed(keys: readonly ConversationKey[]): void {
    for (const k of keys) this.heard.push(`${k.tenantId}/${k.conversationId}`);
  }
  progressed(notice: ProgressNotice): void {
    if (!this.withProgress) return;
    this.heard.push(
      notice.kind === 'recorded'
        ? `recorded ${notice.consumerGroup} ${notice.topic}:${notice.partition} next ${notice.nextOffset} at ${notice.position ?? '-'}`
        : `checkpoint ${notice.projection} ${notice.position}`,
    );
  }
  changedAll(): void {
    this.heard.push('*');
  }
  current(): void {
    this.heard.push('current');
  }
  stale(): void {
    this.heard.push('stale');
  }
}

const scope = (conversationId: string) => ({ tenantId: 't', conversationId, runId: 'r' });
const round = (conversationId: string, i: number): ToolEvent[] => [
  toolCall(scope(conversationId), { roundIndex: i, sequenceIndex: 0, toolCallId: `c${i}` }),
  toolResult(scope(conversationId), { roundIndex: i, sequenceIndex: 0, toolCallId: `c${i}` }),
];

describe('read-model change notifications (real PostgreSQL)', () => {
  let db: FreshSchema;
  let other: FreshSchema;
  let offset = 0;
  const feeds: PostgresConversationChanges[] = [];

  const record = (db: FreshSchema, events: ToolEvent[]) => {
    const batch = events.map((event) => ({ offset: String(offset++), event }));
    return new PostgresRecordingStore(db.pool).recordBatch({
      consumerGroup: 'g',
      topic: 'events',
      partition: 0,
      events: batch,
      nextOffset: String(offset),
    });
  };

  /** A feed of `db`'s schema (through `url` when given), once it is current. */
  const watching = async (url = TEST_DATABASE_URL, heartbeatMs?: number, withProgress = false) => {
    const watcher = new HeardChanges(withProgress);
    const feed = new PostgresConversationChanges({ url, schema: db.schema, poolSize: 1 } as never, undefined, { heartbeatMs });
    feeds.push(feed);
    feed.watch(watcher);
    await waitFor(
      async () => watcher.heard,
      (h) => h.includes('current'),
      { what: 'the feed to listen' },
    );
    return watcher;
  };

  /** Rebuilds the read model from every recorded event and swaps it in. */
  const rebuildAll = async () => {
    const events = new PostgresEventStore(db.pool);
    const rebuild = await new PostgresReadModelRebuilder(db.pool, events, 'events').begin();
    await rebuild.swap(async (apply) => {
      const all = await events.readAll(START_POSITION, { limit: 100_000 });
      await apply(all);
      return all.at(-1)?.globalPosition ?? START_POSITION;
    });
  };

  beforeAll(async () => {
    [db, other] = await Promise.all([freshSchema('changes'), freshSchema('changes_other')]);
  });
  afterAll(async () => {
    await Promise.all(feeds.map((f) => f.close()));
    await db?.drop();
    await other?.drop();
  });

  it('reports, at commit, each conversation a recorded batch changed, and nothing of another schema or of a rollback', async () => {
    const watcher = await watching();
    await record(other, round('elsewhere', 0));
    await inTransaction(db.pool, async (client) => {
      await notifyConversationsChanged(client, [{ tenantId: 't', conversationId: 'rolled-back' }]);
      throw new Error('roll back');
    }).catch(() => undefined);
    await record(db, [...round('a', 0), ...round('b', 0), ...round('a', 1)]);
    // Notifications arrive in commit order: once the batch's are heard, the others would have been.
    await waitFor(
      async () => watcher.heard,
      (h) => h.includes('t/a') && h.includes('t/b'),
      { what: 'the batch to be heard' },
    );
    expect(watcher.heard).toEqual(['current', 't/a', 't/b']);
  });

  it('reports an erased conversation, and every conversation when a rebuilt read model is swapped in', async () => {
    await record(db, round('to-erase', 0));
    const watcher = await watching();
    await new PostgresConversationEraser(db.pool).erase('t', 'to-erase');
    await waitFor(
      async () => watcher.heard,
      (h) => h.includes('t/to-erase'),
      { what: 'the erasure to be heard' },
    );
    await rebuildAll();
    await waitFor(
      async () => watcher.heard,
      (h) => h.includes('*'),
      { what: 'the swap to be heard' },
    );
  });

  it("tells recording's progress after the changes it committed with, and each search projection's", async () => {
    const watcher = await watching(TEST_DATABASE_URL, undefined, true);
    const before = watcher.heard.length;
    const first = offset;
    await record(db, round('progress', 0));
    const lastPosition = (await db.pool.query<{ p: string }>('SELECT max(global_position)::text AS p FROM events')).rows[0].p;
    const heard = await waitFor(
      async () => watcher.heard.slice(before),
      (h) => h.some((line) => line.startsWith('recorded')),
      { what: 'the progress notice' },
    );
    expect(heard).toEqual(['t/progress', `recorded g events:0 next ${first + 2} at ${lastPosition}`]);
    await new PostgresSearchProjection(db.pool, 'words').apply(
      await new PostgresEventStore(db.pool).readAll(START_POSITION, { limit: 1_000 }),
    );
    await waitFor(
      async () => watcher.heard,
      (h) => h.includes(`checkpoint search ${lastPosition}`),
      { what: 'the checkpoint notice' },
    );
  });

  it('splits a change of many conversations into notices PostgreSQL accepts', async () => {
    const watcher = await watching();
    const keys = Array.from({ length: 300 }, (_, i) => ({ tenantId: 't'.repeat(200), conversationId: `${'c'.repeat(200)}-${i}` }));
    await inTransaction(db.pool, (client) => notifyConversationsChanged(client, keys));
    const heard = await waitFor(
      async () => watcher.heard.filter((h) => h.startsWith('tt')),
      (h) => h.length === keys.length,
      { what: 'every key to be heard' },
    );
    expect(heard).toEqual(keys.map((k) => `${k.tenantId}/${k.conversationId}`));
  });

  it('a rebuilt read model has new versions, so a reader that checks versions does not keep rows from before', async () => {
    await record(db, round('versioned', 0));
    const reader = new PostgresReplayReader(db.pool);
    const before = await reader.conversationVersion('t', 'versioned');
    expect((await reader.readConversation('t', 'versioned'))?.version).toBe(before);
    await rebuildAll();
    const after = await reader.conversationVersion('t', 'versioned');
    expect(after).not.toBeNull();
    expect(after).not.toBe(before);
  });

  describe('through a connection that fails', () => {
    let proxy: TcpProxy;
    let url: string;

    beforeAll(async () => {
      const target = new URL(TEST_DATABASE_URL);
      proxy = new TcpProxy(target.hostname, Number(target.port || 5432));
      target.port = String(await proxy.start());
      url = target.toString();
    });
    afterAll(() => proxy.cut());

    it('is stale from a dropped connection until it listens again, and hears changes after that', async () => {
      const watcher = await watching(url);
      await proxy.cut();
      await waitFor(
        async () => watcher.heard,
        (h) => h.includes('stale'),
        { what: 'the feed to go stale' },
      );
      await proxy.restore();
      await waitFor(
        async () => watcher.heard,
        (h) => h.lastIndexOf('current') > h.indexOf('stale'),
        { what: 'the feed to be current again' },
      );
      await record(db, round('after-reconnect', 0));
      await waitFor(
        async () => watcher.heard,
        (h) => h.includes('t/after-reconnect'),
        { what: 'a change after reconnecting' },
      );
    });

    it('is stale when its connection stops answering without closing, found by the heartbeat', async () => {
      const watcher = await watching(url, 200);
      proxy.stall();
      const heard = await waitFor(
        async () => watcher.heard,
        (h) => h.lastIndexOf('current') > h.indexOf('stale') && h.includes('stale'),
        { what: 'the feed to go stale and come back on a new connection' },
      );
      expect(heard.slice(0, 2)).toEqual(['current', 'stale']);
    });
  });
});
