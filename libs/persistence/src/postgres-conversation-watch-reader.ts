import type { Pool, PoolClient } from 'pg';
import {
  type ConversationKey,
  type ConversationWatchReader,
  type EventStore,
  type InvocationRecord,
  pairKeysTouched,
  type PayloadVault,
  type RecordedToolEvent,
  runsShownBy,
  type StoredRun,
  type WatchedConversationState,
  type WatchedConversationUpdate,
} from '@toolhistory/domain';
import { inTransaction } from './in-transaction';
import { SELECT_RECORD } from './postgres-audit-reader';
import { openRecorded, type RecordedRow, SELECT_RECORDED } from './postgres-event-store';
import { openInvocationPayloads } from './sealed-rows';
import { isoText } from './sql-rows';

const SELECT_RUN = `SELECT run_id AS "runId", status, ${isoText('started_at')} AS "startedAt", ${isoText('ended_at')} AS "endedAt",
  finish_reason AS "finishReason", error_code AS "errorCode", error_message AS "errorMessage" FROM runs`;

const toInvocation = (r: InvocationRecord): InvocationRecord => ({
  ...r,
  durationMs: r.durationMs === null ? null : Math.round(r.durationMs),
});

/**
 * One conversation's rows for WatchConversation, read in one REPEATABLE
 * READ transaction: the event count, the erasure mark, the rows (and, after
 * the snapshot, the events) all stand at the same commit, so the count says
 * exactly which events the rows include (docs/adr/024-watch-a-conversation.md).
 *
 * The events come from the `events` table, or, when the events are kept in
 * another store (`externalEvents`), from its stream, read inside the
 * transaction after the count: an event the count includes was appended
 * there before it was projected.
 */
export class PostgresConversationWatchReader implements ConversationWatchReader {
  constructor(
    private readonly pool: Pool,
    private readonly externalEvents: EventStore | null = null,
    /** Opens sealed payloads (encryption at rest, docs/adr/033); the external store opens its own. */
    private readonly vault: PayloadVault | null = null,
  ) {}

  read(conversation: ConversationKey): Promise<WatchedConversationState> {
    const key = [conversation.tenantId, conversation.conversationId];
    return this.inSnapshot(async (client) => {
      const { eventCount, erased } = await countAndErasure(client, key);
      // ListToolInvocations' filter (a row with a call or a result) and order, for one conversation.
      const invocations = await client.query<InvocationRecord>(
        `${SELECT_RECORD} WHERE tenant_id = $1 AND conversation_id = $2 AND at IS NOT NULL
         ORDER BY invocations.at, conversation_id, run_id, round_index, sequence_index, pair_key`,
        key,
      );
      const runs = await client.query<StoredRun>(
        `${SELECT_RUN} WHERE tenant_id = $1 AND conversation_id = $2 ORDER BY started_at, run_id`,
        key,
      );
      const opened = await openInvocationPayloads(invocations.rows, this.vault);
      return { eventCount, erased, invocations: opened.map(toInvocation), runs: runs.rows };
    });
  }

  readSince(conversation: ConversationKey, afterPosition: number): Promise<WatchedConversationUpdate> {
    const key = [conversation.tenantId, conversation.conversationId];
    return this.inSnapshot(async (client) => {
      const { eventCount, erased } = await countAndErasure(client, key);
      if (erased || eventCount <= afterPosition) return { eventCount, erased, events: [], invocations: [], runs: [] };
      const events = await this.eventsBetween(client, conversation, afterPosition, eventCount);
      const pairKeys = pairKeysTouched(events);
      const invocations =
        pairKeys.length === 0
          ? []
          : (
              await openInvocationPayloads(
                (
                  await client.query<InvocationRecord>(
                    `${SELECT_RECORD} WHERE tenant_id = $1 AND conversation_id = $2 AND pair_key = ANY($3::text[]) AND at IS NOT NULL`,
                    [...key, pairKeys],
                  )
                ).rows,
                this.vault,
              )
            ).map(toInvocation);
      const runIds = runsShownBy(invocations);
      const runs =
        runIds.length === 0
          ? []
          : (
              await client.query<StoredRun>(`${SELECT_RUN} WHERE tenant_id = $1 AND conversation_id = $2 AND run_id = ANY($3::text[])`, [
                ...key,
                runIds,
              ])
            ).rows;
      return { eventCount, erased, events, invocations, runs };
    });
  }

  private inSnapshot<T>(read: (client: PoolClient) => Promise<T>): Promise<T> {
    return inTransaction(this.pool, async (client) => {
      await client.query('SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY');
      return read(client);
    });
  }

  /** The stream's events at positions after `after`, up to `upTo`, in order. */
  private async eventsBetween(
    client: PoolClient,
    conversation: ConversationKey,
    after: number,
    upTo: number,
  ): Promise<RecordedToolEvent[]> {
    if (this.externalEvents) {
      const stream = await this.externalEvents.readStream(conversation);
      return stream.filter((e) => e.streamPosition > after && e.streamPosition <= upTo).sort((a, b) => a.streamPosition - b.streamPosition);
    }
    const { rows } = await client.query<RecordedRow>(
      `${SELECT_RECORDED} WHERE tenant_id = $1 AND conversation_id = $2 AND stream_position > $3 AND stream_position <= $4
       ORDER BY stream_position`,
      [conversation.tenantId, conversation.conversationId, after, upTo],
    );
    return openRecorded(rows, this.vault);
  }
}

async function countAndErasure(client: PoolClient, key: string[]): Promise<{ eventCount: number; erased: boolean }> {
  const { rows } = await client.query<{ eventCount: number | null; erased: boolean | null }>(
    `SELECT (SELECT event_count FROM conversations WHERE tenant_id = $1 AND conversation_id = $2) AS "eventCount",
            (SELECT erased_at IS NOT NULL FROM streams WHERE tenant_id = $1 AND conversation_id = $2) AS erased`,
    key,
  );
  return { eventCount: rows[0]?.eventCount ?? 0, erased: rows[0]?.erased === true };
}
