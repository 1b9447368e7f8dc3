import type { Pool } from 'pg';
import { ToolEvent, upcastToolEvent } from '@toolhistory/contract';
import {
  AppendOptions,
  AppendResult,
  conversationKeyString,
  EventStore,
  GlobalPosition,
  openEvents,
  type PayloadVault,
  ReadAllOptions,
  RecordedToolEvent,
  StreamRef,
  SubscribeOptions,
} from '@toolhistory/domain';
import { AppError, ErrorCode, rejected } from '@toolhistory/errors';
import { inTransaction } from './in-transaction';
import { allocateStreamPositions, insertEvents, withoutRecordedEvents } from './postgres-event-append';
import { PostgresAppendListener } from './postgres-append-listener';
import { classifyPostgresError } from './postgres-errors';
import { isoText } from './sql-rows';

/** An event as the store answers it (see `toRecorded`). */
export const SELECT_RECORDED = `SELECT global_position::text AS "globalPosition", stream_position AS "streamPosition",
  ${isoText('recorded_at')} AS "recordedAt", payload, traceparent FROM events`;

export interface RecordedRow {
  globalPosition: string;
  streamPosition: number;
  recordedAt: string;
  payload: unknown;
  traceparent: string | null;
}

export interface PostgresEventStoreOptions {
  /** Events read per query while catching up. */
  pageSize?: number;

  /** How long a caught-up subscriber waits for a notification before it looks again anyway. */
  idlePollMs?: number;
}

/**
 * The EventStore port on PostgreSQL: the same tables and append path the
 * recorder writes (ADR 002 makes global positions safe to follow).
 */
export class PostgresEventStore implements EventStore {
  private readonly pageSize: number;
  private readonly idlePollMs: number;

  constructor(
    private readonly pool: Pool,
    private readonly listener: PostgresAppendListener | null = null,
    options: PostgresEventStoreOptions = {},
  ) {
    this.pageSize = options.pageSize ?? 1_000;
    this.idlePollMs = options.idlePollMs ?? 1_000;
  }

  append(stream: StreamRef, events: readonly ToolEvent[], options: AppendOptions = {}): Promise<AppendResult> {
    const foreign = events.find((e) => conversationKeyString(e) !== conversationKeyString(stream));
    if (foreign) {
      return Promise.reject(
        rejected(
          ErrorCode.InvalidArgument,
          `event ${foreign.eventId} belongs to ${describe(foreign)}, not to the stream ${describe(stream)}`,
        ),
      );
    }
    const expected = options.expectedPosition ?? 'any';
    return inTransaction(this.pool, async (client) => {
      // Locks (creating if needed) the stream row, so the expectation holds until commit.
      const { rows } = await client.query<{ version: number; erased: boolean; created: boolean }>(
        `INSERT INTO streams (tenant_id, conversation_id, version) VALUES ($1, $2, 0)
         ON CONFLICT (tenant_id, conversation_id) DO UPDATE SET version = streams.version
         RETURNING version, erased_at IS NOT NULL AS erased, xmax = 0 AS created`,
        [stream.tenantId, stream.conversationId],
      );
      const { version, erased } = rows[0];
      const fresh = await withoutRecordedEvents(client, events, (e) => e);
      const duplicates = events.length - fresh.length;
      if (fresh.length === 0) return { streamPosition: version, appended: 0, duplicates };
      if (erased) throw new AppError(ErrorCode.StreamErased, `stream ${describe(stream)} was erased`);
      const conflict = (expected === 'no_stream' && version !== 0) || (typeof expected === 'number' && expected !== version);
      if (conflict) {
        throw new AppError(
          ErrorCode.ConcurrencyConflict,
          `stream ${describe(stream)} is at position ${version}, expected ${expected === 'no_stream' ? 'no stream' : expected}`,
          { details: { actual: version, expected } },
        );
      }
      const { positioned } = await allocateStreamPositions(client, fresh);
      for (const p of positioned) p.traceparent = options.traceparents?.get(p.event.eventId.toLowerCase());
      await insertEvents(client, positioned);
      return {
        streamPosition: version + positioned.length,
        appended: positioned.length,
        duplicates,
        globalPosition: positioned.at(-1)!.globalPosition,
      };
    });
  }

  async readStream(stream: StreamRef): Promise<RecordedToolEvent[]> {
    const rows = await this.query(`${SELECT_RECORDED} WHERE tenant_id = $1 AND conversation_id = $2 ORDER BY stream_position`, [
      stream.tenantId,
      stream.conversationId,
    ]);
    return rows.map(toRecorded);
  }

  async readAll(after: GlobalPosition, options: ReadAllOptions): Promise<RecordedToolEvent[]> {
    const values: unknown[] = [after];
    const bind = (value: unknown) => `$${values.push(value)}`;
    const conditions = ['global_position > $1::int8'];
    if (options.tenantId !== undefined) conditions.push(`tenant_id = ${bind(options.tenantId)}`);
    if (options.types && options.types.length > 0) conditions.push(`type = ANY(${bind(options.types)}::text[])`);
    const rows = await this.query(
      `${SELECT_RECORDED} WHERE ${conditions.join(' AND ')} ORDER BY global_position LIMIT ${bind(options.limit)}`,
      values,
    );
    return rows.map(toRecorded);
  }

  subscribe(after: GlobalPosition, options: SubscribeOptions = {}): AsyncIterable<RecordedToolEvent> {
    return followPages(
      after,
      options,
      { listener: this.listener, pageSize: this.pageSize, idlePollMs: this.idlePollMs },
      (position, limit) => this.readAll(position, { ...options, limit }),
    );
  }

  async deleteStream(stream: StreamRef): Promise<number> {
    return inTransaction(this.pool, (client) => eraseStreamEvents(client, stream));
  }

  private async query(text: string, values: unknown[]): Promise<RecordedRow[]> {
    try {
      const { rows } = await this.pool.query<RecordedRow>(text, values);
      return rows;
    } catch (error) {
      throw classifyPostgresError(error);
    }
  }
}

/**
 * Marks the stream erased (taking the row lock the recorder takes before it
 * appends) and deletes its events; answers how many went.
 */
export async function eraseStreamEvents(client: { query: Pool['query'] }, stream: StreamRef): Promise<number> {
  const key = [stream.tenantId, stream.conversationId];
  await client.query(
    `INSERT INTO streams (tenant_id, conversation_id, version, erased_at) VALUES ($1, $2, 0, now())
     ON CONFLICT (tenant_id, conversation_id) DO UPDATE SET erased_at = coalesce(streams.erased_at, now())`,
    key,
  );
  const deleted = await client.query('DELETE FROM events WHERE tenant_id = $1 AND conversation_id = $2', key);
  return deleted.rowCount ?? 0;
}

export function toRecorded(row: RecordedRow): RecordedToolEvent {
  return {
    globalPosition: row.globalPosition,
    streamPosition: row.streamPosition,
    recordedAt: row.recordedAt,
    event: upcastToolEvent(row.payload),
    ...(row.traceparent ? { traceparent: row.traceparent } : {}),
  };
}

/**
 * Events as read, their sealed payloads opened when a vault is given (each
 * keeps its `sealed` note); without one, as stored. The EventStore port's
 * readers get theirs opened by `OpenedEventStore` (libs/domain).
 */
export async function openRecorded(rows: readonly RecordedRow[], vault: PayloadVault | null): Promise<RecordedToolEvent[]> {
  const recorded = rows.map(toRecorded);
  if (vault === null || !recorded.some((r) => r.event.sealed !== undefined)) return recorded;
  const events = await openEvents(
    recorded.map((r) => r.event),
    vault,
    Date.now(),
  );
  return recorded.map((r, i) => ({ ...r, event: events[i] }));
}

function describe(ref: StreamRef): string {
  return `${ref.tenantId}/${ref.conversationId}`;
}

/**
 * Pages after `after` in global order, then live ones as they are appended
 * (woken by the append notification, else after an idle interval), until
 * the signal aborts or the consumer stops iterating.
 */
export async function* followPages<T extends { globalPosition: GlobalPosition }>(
  after: GlobalPosition,
  options: SubscribeOptions,
  settings: { listener: PostgresAppendListener | null; pageSize: number; idlePollMs: number },
  readPage: (after: GlobalPosition, limit: number) => Promise<T[]>,
): AsyncIterable<T> {
  const { signal } = options;
  let position = after;
  while (!signal?.aborted) {
    // Armed before reading, so an append committed after the read still wakes us.
    const appended = settings.listener?.nextAppend(signal) ?? null;
    const page = await readPage(position, settings.pageSize);
    for (const recorded of page) {
      if (signal?.aborted) return;
      yield recorded;
      position = recorded.globalPosition;
    }
    if (page.length < settings.pageSize) await waitFor(appended, settings.idlePollMs, signal);
  }
}

/** Resolves on the next append, after `ms`, or when aborted, whichever comes first. */
function waitFor(appended: Promise<void> | null, ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal?.addEventListener('abort', done, { once: true });
    appended?.then(done, done);
  });
}
