import type { Pool, PoolClient } from 'pg';
import { StoredToolEvent, ToolEvent, upcastToolEvent } from '@toolhistory/contract';
import {
  DEFAULT_REDACTION_POLICY,
  Offset,
  projectEvents,
  ReadModelState,
  RecordBatchCommand,
  RecordBatchOutcome,
  RecordingStore,
  offsetGap,
  redactEarlyResult,
  RedactionPolicy,
  redactToolEvent,
  resultsAwaitingTheirCall,
  toolNameFor,
  toolNamesByInvocation,
  withRecordedResult,
} from '@toolhistory/domain';
import { inTransaction } from './in-transaction';
import { PostgresConsumerOffsets } from './postgres-consumer-offsets';
import { loadReadModelState, writeReadModelChanges } from './postgres-read-model-writer';
import { allocateStreamPositions, insertEvents, withoutRecordedEvents } from './postgres-event-append';

/**
 * The PostgreSQL side of recording: one transaction per partition batch.
 * The partition's offset row is locked first (exact skipping of redelivered
 * messages); stream rows are locked per conversation; the global append lock
 * is taken last, only around allocating global positions and inserting.
 */
export class PostgresRecordingStore implements RecordingStore {
  private readonly offsets: PostgresConsumerOffsets;

  constructor(
    private readonly pool: Pool,
    private readonly redaction: RedactionPolicy = DEFAULT_REDACTION_POLICY,
  ) {
    this.offsets = new PostgresConsumerOffsets(pool);
  }

  recordBatch(command: RecordBatchCommand): Promise<RecordBatchOutcome> {
    return inTransaction(this.pool, (client) => this.recordInTransaction(client, command));
  }

  committedOffsets(consumerGroup: string, topic: string): Promise<Map<number, Offset>> {
    return this.offsets.committed(consumerGroup, topic);
  }

  private async recordInTransaction(client: PoolClient, command: RecordBatchCommand): Promise<RecordBatchOutcome> {
    // Locks this partition's offset row: a consumer that still holds the partition
    // after a rebalance waits here, then sees the new offset and skips the batch.
    const stored = await client.query<{ next_offset: string }>(
      `INSERT INTO consumer_offsets (group_id, topic, partition, next_offset) VALUES ($1, $2, $3, -1)
       ON CONFLICT (group_id, topic, partition) DO UPDATE SET next_offset = consumer_offsets.next_offset
       RETURNING next_offset`,
      [command.consumerGroup, command.topic, command.partition],
    );
    const committed = BigInt(stored.rows[0].next_offset);
    // -1: PostgreSQL knows nothing of the partition yet (the consumer starts it at the beginning).
    if (committed >= 0n && command.firstOffset !== undefined && BigInt(command.firstOffset) > committed) {
      throw offsetGap(command, committed.toString(), command.firstOffset);
    }
    const fresh = command.events.filter((m) => BigInt(m.offset) >= committed);
    const alreadyCommitted = command.events.length - fresh.length;
    if (committed >= BigInt(command.nextOffset)) {
      return { appended: 0, duplicates: 0, alreadyCommitted, erased: 0 };
    }

    const newEvents = await withoutRecordedEvents(client, fresh, (m) => m.event);
    const duplicates = fresh.length - newEvents.length;
    const { positioned, erased } =
      newEvents.length > 0
        ? await allocateStreamPositions(
            client,
            newEvents.map((m) => m.event),
          )
        : { positioned: [], erased: 0 };
    if (positioned.length > 0) {
      // Each event is stored in the schema version it was received in (a v1
      // event stays v1; readers upcast it), while the read model is built
      // from the current version. Redaction keeps an event's version (it
      // touches no field that differs between versions), so the payload
      // stored is the redacted event as received and the projection gets
      // that same event upcast.
      const current = positioned.map((p) => upcastToolEvent(p.event));
      const state = await loadReadModelState(client, current);
      // Redaction happens here, before anything of the batch is written.
      const toolNames = toolNamesByInvocation(current, state.invocations.values());
      positioned.forEach((p, i) => (p.event = redactToolEvent(p.event, this.redaction, toolNameFor(toolNames, current[i]))));
      const redacted = positioned.map((p) => upcastToolEvent(p.event));
      await this.redactEarlyResults(client, state, redacted);
      await writeReadModelChanges(client, projectEvents(state, redacted));
    }

    await client.query(
      `UPDATE consumer_offsets SET next_offset = $4, updated_at = now()
       WHERE group_id = $1 AND topic = $2 AND partition = $3`,
      [command.consumerGroup, command.topic, command.partition, command.nextOffset],
    );
    // Last, so the append lock is held only for the insert and the commit.
    await insertEvents(client, positioned);
    return { appended: positioned.length, duplicates, alreadyCommitted, erased };
  }

  /**
   * Results recorded in an earlier batch than their call were redacted by
   * the default rule; the call now names the tool, so the stored result gets
   * the tool's rule, in the events table and in the row about to be updated.
   */
  private async redactEarlyResults(client: PoolClient, state: ReadModelState, events: readonly ToolEvent[]): Promise<void> {
    const waiting = resultsAwaitingTheirCall(state, events);
    if (waiting.size === 0) return;
    const { rows } = await client.query<{ payload: StoredToolEvent }>('SELECT payload FROM events WHERE event_id = ANY($1::uuid[])', [
      [...waiting.keys()],
    ]);
    for (const { payload } of rows) {
      // The payload is in the version it was received in. A result has the
      // same shape in every supported version (the call below would not
      // compile otherwise), so it is redacted as stored and written back in
      // its own version: stored events are never rewritten to a newer one.
      if (payload.type !== 'ToolResultReceived') continue;
      const { key, row, toolName } = waiting.get(payload.eventId.toLowerCase())!;
      const redacted = redactEarlyResult(payload, this.redaction, toolName);
      if (redacted === null) continue;
      await client.query('UPDATE events SET payload = $2 WHERE event_id = $1', [payload.eventId, redacted]);
      state.invocations.set(key, withRecordedResult(row, redacted));
    }
  }
}
