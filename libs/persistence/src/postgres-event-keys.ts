import type { Pool } from 'pg';
import type { EventKeyFeed, GlobalPosition, RecordedEventKeys, SubscribeOptions } from '@toolhistory/domain';
import { classifyPostgresError } from './postgres-errors';
import type { PostgresAppendListener } from './postgres-append-listener';
import { followPages, type PostgresEventStoreOptions } from './postgres-event-store';
import { isoText } from './sql-rows';

interface KeyRow {
  globalPosition: string;
  recordedAt: string;
  eventId: string;
  type: RecordedEventKeys['event']['type'];
  tenantId: string;
  conversationId: string;
  runId: string;
  pairKey: string | null;
  /** [toolCallId, roundIndex, sequenceIndex], where they come from the payload. */
  pairMembers: [string | null, number | null, number | null] | null;
}

/**
 * The PostgreSQL event store's events, keys only (EventKeyFeed): columns
 * only, an invocation's pair key included (migration 026), so no payload
 * is read, decompressed or sent: what the search projections follow. An
 * invocation's event appended before that migration has no pair key
 * column: the three members that make it are taken from its payload in
 * PostgreSQL (the same in every stored schema version; an upcaster that
 * moved one would have to be mirrored here).
 */
export class PostgresEventKeys implements EventKeyFeed {
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

  subscribe(after: GlobalPosition, options: SubscribeOptions = {}): AsyncIterable<RecordedEventKeys> {
    return followPages(
      after,
      options,
      { listener: this.listener, pageSize: this.pageSize, idlePollMs: this.idlePollMs },
      (position, limit) => this.readKeys(position, options, limit),
    );
  }

  /** Keys of the events after `after` in global order. */
  async readKeys(after: GlobalPosition, options: Omit<SubscribeOptions, 'signal'>, limit: number): Promise<RecordedEventKeys[]> {
    const values: unknown[] = [after];
    const bind = (value: unknown) => `$${values.push(value)}`;
    const conditions = ['e.global_position > $1::int8'];
    if (options.tenantId !== undefined) conditions.push(`e.tenant_id = ${bind(options.tenantId)}`);
    if (options.types && options.types.length > 0) conditions.push(`e.type = ANY(${bind(options.types)}::text[])`);
    try {
      const { rows } = await this.pool.query<KeyRow>(
        `SELECT e.global_position::text AS "globalPosition", ${isoText('e.recorded_at')} AS "recordedAt", e.event_id AS "eventId",
           e.type, e.tenant_id AS "tenantId", e.conversation_id AS "conversationId", e.run_id AS "runId", e.pair_key AS "pairKey",
           -- Only where the column is empty (appended before migration 026): the pair's members from the payload.
           CASE WHEN e.pair_key IS NULL AND e.type IN ('ToolCallRequested', 'ToolResultReceived', 'ToolApprovalRequested', 'ToolApprovalDecided')
             THEN (SELECT json_build_array(k."toolCallId", k."roundIndex", k."sequenceIndex")
                   FROM json_to_record(e.payload) AS k("toolCallId" text, "roundIndex" numeric, "sequenceIndex" numeric)) END AS "pairMembers"
         FROM events e
         WHERE ${conditions.join(' AND ')} ORDER BY e.global_position LIMIT ${bind(limit)}`,
        values,
      );
      return rows.map((r) => ({
        globalPosition: r.globalPosition,
        recordedAt: r.recordedAt,
        event: {
          eventId: r.eventId,
          type: r.type,
          tenantId: r.tenantId,
          conversationId: r.conversationId,
          runId: r.runId,
          ...(r.pairKey === null ? {} : { pairKey: r.pairKey }),
          ...membersOf(r.pairMembers),
        },
      }));
    } catch (error) {
      throw classifyPostgresError(error);
    }
  }
}

/** The members that make an older event's pair key, as far as its payload has them. */
function membersOf(members: KeyRow['pairMembers']): Pick<RecordedEventKeys['event'], 'toolCallId' | 'roundIndex' | 'sequenceIndex'> {
  if (members === null) return {};
  const [toolCallId, roundIndex, sequenceIndex] = members;
  return {
    ...(toolCallId === null ? {} : { toolCallId }),
    ...(roundIndex === null ? {} : { roundIndex: Number(roundIndex) }),
    ...(sequenceIndex === null ? {} : { sequenceIndex: Number(sequenceIndex) }),
  };
}
