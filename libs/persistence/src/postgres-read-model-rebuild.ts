import { notifyEveryConversationChanged } from './postgres-conversation-changes';
import { availableParallelism } from 'node:os';
import type { Pool, PoolClient } from 'pg';
import {
  type PayloadVault,
  ApplyEvents,
  conversationKeyString,
  EventStore,
  GlobalPosition,
  keysTouchedBy,
  ReadModelRebuild,
  ReadModelRebuilder,
  RecordedToolEvent,
  TokenCounter,
} from '@toolhistory/domain';
import { o200kTokens } from '@toolhistory/tokenizer';
import { AppError, ErrorCode } from '@toolhistory/errors';
import { inTransaction } from './in-transaction';
import { classifyPostgresError } from './postgres-errors';
import { advanceCheckpoint, lockCheckpoint } from './postgres-projection-checkpoints';
import { applyRecordedEvents, LIVE_READ_MODEL, ReadModelTableNames } from './postgres-read-model-writer';
import { keepTraceContexts } from './postgres-external-event-traces';
import { fillSearchDocuments, LIVE_SEARCH, refreshSearchDocuments, SEARCH_KINDS, SearchTableNames } from './postgres-search-documents';
import { SEARCH_PROJECTIONS } from './postgres-search-projection';
import type { InvocationPayloads } from './read-model-tables';

const REBUILD_SUFFIX = '_rebuild';
const RETIRED_SUFFIX = '_retired';
/** Every table a rebuild makes anew: the read model and the search documents made from it. */
const TABLES = [...Object.values(LIVE_READ_MODEL), LIVE_SEARCH.words, LIVE_SEARCH.substring];
const suffixed = (suffix: string): ReadModelTableNames => ({
  conversations: `conversations${suffix}`,
  runs: `runs${suffix}`,
  invocations: `invocations${suffix}`,
  responses: `model_responses${suffix}`,
});
export const REBUILD_TABLES = suffixed(REBUILD_SUFFIX);
const REBUILD_SEARCH: SearchTableNames = {
  invocations: REBUILD_TABLES.invocations,
  words: `${LIVE_SEARCH.words}${REBUILD_SUFFIX}`,
  substring: `${LIVE_SEARCH.substring}${REBUILD_SUFFIX}`,
};
const REBUILT = TABLES.map((table) => `${table}${REBUILD_SUFFIX}`);

/**
 * Connections that write the rebuilt tables at once: the machine's cores
 * (the work is PostgreSQL's CPU), at most 4, whatever the pool's size.
 */
const WRITERS = Math.max(1, Math.min(4, availableParallelism()));

/** The checkpoint of the read model's projection: the last global position applied to it. */
export const READ_MODEL_PROJECTION = 'read-model';
/** Every projection whose tables a rebuild makes anew, and so whose checkpoint it moves. */
const REBUILT_PROJECTIONS = [READ_MODEL_PROJECTION, ...Object.values(SEARCH_PROJECTIONS)];

/**
 * Rebuilds the read model into fresh tables beside the live ones (same
 * columns, generated columns, constraints and indexes) and swaps them in by
 * renaming, so queries keep being answered from the live tables until the
 * swap and from the rebuilt ones after it.
 */
export class PostgresReadModelRebuilder implements ReadModelRebuilder {
  /** `payloads`: 'events' when `events` is this schema's PostgreSQL event store, else 'row'. */
  constructor(
    private readonly pool: Pool,
    private readonly events: EventStore,
    private readonly payloads: InvocationPayloads,
    private readonly tokens: TokenCounter = o200kTokens,
    /** Opens sealed payloads for the search documents (docs/adr/033); the events come opened from `events`. */
    private readonly vault: PayloadVault | null = null,
  ) {}

  async begin(): Promise<ReadModelRebuild> {
    const session = await this.pool.connect();
    // Held across calls: a connection that drops meanwhile fails the next query, not the process.
    session.on('error', ignoreWhileOut);
    try {
      const { rows } = await session.query<{ locked: boolean }>(
        `SELECT pg_try_advisory_lock(hashtext(current_schema() || '.rebuild')) AS locked`,
      );
      if (!rows[0].locked) throw new AppError(ErrorCode.ConcurrencyConflict, 'another rebuild of this read model is running');
      // Leftovers of a rebuild that died are dropped: nothing reads them.
      for (const table of REBUILT) await session.query(`DROP TABLE IF EXISTS ${table}`);
      for (const table of TABLES) await session.query(`CREATE TABLE ${table}${REBUILD_SUFFIX} (LIKE ${table} INCLUDING ALL)`);
      await copyStorageParameters(session, TABLES);
      // Only the keys the upserts need stay during the bulk load; the rest is built once at the end.
      const deferred = await secondaryIndexesOf(session, REBUILT);
      for (const index of deferred) await session.query(`DROP INDEX ${quote(index.name)}`);
      return new PostgresRebuild(
        this.pool,
        session,
        this.events,
        this.payloads,
        this.tokens,
        deferred.map((i) => i.definition),
        this.vault,
      );
    } catch (error) {
      await releaseSession(session);
      throw classifyPostgresError(error);
    }
  }
}

class PostgresRebuild implements ReadModelRebuild {
  private finished = false;
  /** Search documents are made in one pass once the bulk of events is in; from then on, with each batch. */
  private searchFilled = false;

  constructor(
    private readonly pool: Pool,
    private readonly session: PoolClient,
    private readonly events: EventStore,
    private readonly payloads: InvocationPayloads,
    private readonly tokens: TokenCounter,
    private readonly deferredIndexes: string[],
    private readonly vault: PayloadVault | null,
  ) {}

  async buildIndexes(): Promise<void> {
    try {
      if (!this.searchFilled) {
        await fillSearchDocuments(this.pool, REBUILD_SEARCH, WRITERS, this.vault);
        this.searchFilled = true;
      }
      while (this.deferredIndexes.length > 0) {
        await this.session.query(this.deferredIndexes[0]);
        this.deferredIndexes.shift();
      }
    } catch (error) {
      throw classifyPostgresError(error);
    }
  }

  /**
   * Conversations share no rows, so a page is split by conversation and the
   * parts are applied at once, each in its own transaction and in global
   * order within itself. A part that fails fails the rebuild, which is then
   * abandoned: no part is ever applied twice.
   */
  apply: ApplyEvents = async (events) => {
    if (events.length === 0) return;
    const parts = byConversation(events, WRITERS);
    await Promise.all(parts.map((part) => inTransaction(this.pool, (client) => this.applyWith(client, part))));
  };

  async swap(finish: (apply: ApplyEvents) => Promise<GlobalPosition>): Promise<void> {
    const client = this.session;
    try {
      await this.buildIndexes();
      await client.query('BEGIN');
      // The checkpoints first: a projector takes its own before the tables, so taking them in the same order cannot deadlock.
      for (const projection of REBUILT_PROJECTIONS) await lockCheckpoint(client, projection);
      // Every writer of the live tables (recorder batches, erasures) finishes or waits; one
      // that already read rows jumps the queue to finish, so this cannot deadlock with it.
      await client.query(`LOCK TABLE ${TABLES.join(', ')} IN ACCESS EXCLUSIVE MODE`);
      const position = await finish((events) => this.applyWith(client, events));
      // Conversations erased after the rebuild read their events must not come back.
      for (const table of REBUILT) {
        await client.query(
          `DELETE FROM ${table} t USING streams s
           WHERE s.erased_at IS NOT NULL AND s.tenant_id = t.tenant_id AND s.conversation_id = t.conversation_id`,
        );
      }
      const liveIndexes = await indexesOf(client, TABLES);
      for (const table of TABLES) await client.query(`ALTER TABLE ${table} RENAME TO ${table}${RETIRED_SUFFIX}`);
      for (const table of TABLES) await client.query(`ALTER TABLE ${table}${REBUILD_SUFFIX} RENAME TO ${table}`);
      for (const table of TABLES) await client.query(`DROP TABLE ${table}${RETIRED_SUFFIX}`);
      await renameIndexesLike(client, liveIndexes);
      for (const projection of REBUILT_PROJECTIONS) await advanceCheckpoint(client, projection, position);
      await notifyEveryConversationChanged(client);
      await client.query('COMMIT');
      this.finished = true;
    } catch (error) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw classifyPostgresError(error);
    } finally {
      if (this.finished) await releaseSession(client);
    }
  }

  async abandon(): Promise<void> {
    if (this.finished) return;
    this.finished = true;
    try {
      for (const table of REBUILT) await this.session.query(`DROP TABLE IF EXISTS ${table}`);
    } finally {
      await releaseSession(this.session);
    }
  }

  private async applyWith(client: PoolClient, recorded: readonly RecordedToolEvent[]): Promise<void> {
    await applyRecordedEvents(client, recorded, REBUILD_TABLES, this.events, this.payloads, this.tokens);
    // Not a read-model table: kept across rebuilds, and filled here for a database rebuilt from another store.
    await keepTraceContexts(client, recorded);
    if (this.searchFilled)
      await refreshSearchDocuments(client, keysTouchedBy(recorded.map((r) => r.event)).invocations, {
        kinds: SEARCH_KINDS,
        tables: REBUILD_SEARCH,
        vault: this.vault,
      });
  }
}

/** The events split into at most `parts` lists by conversation, each in the order given. */
function byConversation(events: readonly RecordedToolEvent[], parts: number): RecordedToolEvent[][] {
  if (parts === 1) return [[...events]];
  const lists: RecordedToolEvent[][] = Array.from({ length: parts }, () => []);
  const partOf = new Map<string, number>();
  for (const recorded of events) {
    const key = conversationKeyString(recorded.event);
    let part = partOf.get(key);
    if (part === undefined) partOf.set(key, (part = partOf.size % parts));
    lists[part].push(recorded);
  }
  return lists.filter((list) => list.length > 0);
}

/**
 * LIKE ... INCLUDING ALL copies columns' storage and compression, not the
 * table's storage parameters (toast_tuple_target, fillfactor): set here, so
 * a rebuilt table stores its rows as the live one did.
 */
async function copyStorageParameters(client: PoolClient, tables: string[]): Promise<void> {
  const { rows } = await client.query<{ table: string; options: string[] }>(
    `SELECT relname AS table, reloptions AS options FROM pg_class
     WHERE relnamespace = current_schema()::regnamespace AND relname = ANY($1) AND reloptions IS NOT NULL`,
    [tables],
  );
  for (const { table, options } of rows) await client.query(`ALTER TABLE ${table}${REBUILD_SUFFIX} SET (${options.join(', ')})`);
}

/** Indexes that back no constraint: dropped for the bulk load, their definitions kept to build them again. */
async function secondaryIndexesOf(client: PoolClient, tables: string[]): Promise<Array<{ name: string; definition: string }>> {
  const { rows } = await client.query<{ name: string; definition: string }>(
    `SELECT i.relname AS name, pg_get_indexdef(i.oid) AS definition
     FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid JOIN pg_class c ON c.oid = x.indrelid
     WHERE c.relnamespace = current_schema()::regnamespace AND c.relname = ANY($1)
       AND NOT EXISTS (SELECT 1 FROM pg_constraint k WHERE k.conindid = x.indexrelid)`,
    [tables],
  );
  return rows;
}

interface IndexInfo {
  table: string;
  name: string;
  /** The definition without its name and table: what identifies the same index on the rebuilt table. */
  shape: string;
}

async function indexesOf(client: PoolClient, tables: string[]): Promise<IndexInfo[]> {
  const { rows } = await client.query<{ table: string; name: string; def: string }>(
    `SELECT c.relname AS table, i.relname AS name, pg_get_indexdef(i.oid) AS def
     FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid JOIN pg_class c ON c.oid = x.indrelid
     WHERE c.relnamespace = current_schema()::regnamespace AND c.relname = ANY($1)`,
    [tables],
  );
  return rows.map((r) => ({ table: r.table, name: r.name, shape: shapeOf(r.def) }));
}

function shapeOf(definition: string): string {
  const match = /^CREATE (UNIQUE )?INDEX \S+ ON (?:ONLY )?(?:\S+\.)?(\S+) (USING .*)$/.exec(definition);
  if (!match) throw new Error(`unexpected index definition: ${definition}`);
  const table = match[2].replace(/"/g, '').replace(new RegExp(`${REBUILD_SUFFIX}$`), '');
  return `${match[1] ?? ''}${table} ${match[3]}`;
}

/** Gives the rebuilt tables' indexes (and so their constraints) the names the live ones had, for later migrations. */
async function renameIndexesLike(client: PoolClient, previous: IndexInfo[]): Promise<void> {
  const current = await indexesOf(client, TABLES);
  for (const old of previous) {
    const match = current.find((c) => c.table === old.table && c.shape === old.shape);
    if (!match) throw new Error(`the rebuilt ${old.table} has no index like ${old.name}`);
    if (match.name !== old.name) await client.query(`ALTER INDEX ${quote(match.name)} RENAME TO ${quote(old.name)}`);
  }
}

const quote = (name: string): string => `"${name.replace(/"/g, '""')}"`;

function ignoreWhileOut(): void {
  // The failure reaches the rebuild through the query that fails (see checked-out-client.ts).
}

async function releaseSession(session: PoolClient): Promise<void> {
  await session.query(`SELECT pg_advisory_unlock_all()`).catch(() => undefined);
  session.off('error', ignoreWhileOut);
  session.release();
}
