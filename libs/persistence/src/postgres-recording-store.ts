import type { Pool, PoolClient } from 'pg';
import { StoredToolEvent, ToolEvent, upcastToolEvent } from '@toolhistory/contract';
import {
  decideOffsets,
  DEFAULT_REDACTION_POLICY,
  emptySummary,
  Offset,
  OffsetGap,
  summarizeRecorded,
  projectEvents,
  ReadModelState,
  RecordBatchCommand,
  RecordBatchOutcome,
  RecordingStore,
  redactBatch,
  redactEarlyResult,
  RedactionPolicy,
  resultsAwaitingTheirCall,
  TokenCounter,
  withRecordedResult,
} from '@toolhistory/domain';
import { o200kTokens } from '@toolhistory/tokenizer';
import { inTransaction } from './in-transaction';
import { advancePartitionOffset, lockPartitionOffset, PostgresConsumerOffsets } from './postgres-consumer-offsets';
import { loadReadModelState, writeReadModelChanges } from './postgres-read-model-writer';
import { allocateStreamPositions, insertEvents, PositionedEvent, withoutRecordedEvents } from './postgres-event-append';

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
    private readonly tokens: TokenCounter = o200kTokens,
  ) {
    this.offsets = new PostgresConsumerOffsets(pool);
  }

  recordBatch(command: RecordBatchCommand): Promise<RecordBatchOutcome | OffsetGap> {
    return inTransaction(this.pool, (client) => this.recordInTransaction(client, command));
  }

  committedOffsets(consumerGroup: string, topic: string): Promise<Map<number, Offset>> {
    return this.offsets.committed(consumerGroup, topic);
  }

  /**
   * The recording transaction: lock the partition's offset, skip what it
   * already committed, dedupe, number, redact, project, advance the offset,
   * append. The append comes last so the global append lock is held only
   * for the insert and the commit.
   */
  private async recordInTransaction(client: PoolClient, command: RecordBatchCommand): Promise<RecordBatchOutcome | OffsetGap> {
    const decision = decideOffsets(await lockPartitionOffset(client, command), command);
    if (decision.kind === 'gap') return decision;
    const { fresh, alreadyCommitted } = decision;
    if (decision.upToDate) return { appended: 0, duplicates: 0, alreadyCommitted, erased: 0, recorded: emptySummary() };

    const newEvents = await withoutRecordedEvents(client, fresh, (m) => m.event);
    const { positioned, erased } =
      newEvents.length > 0
        ? await allocateStreamPositions(
            client,
            newEvents.map((m) => m.event),
          )
        : { positioned: [], erased: 0 };
    const traces = new Map(newEvents.map((m) => [m.event.eventId, m.traceparent]));
    for (const p of positioned) p.traceparent = traces.get(p.event.eventId);
    if (positioned.length > 0) await this.redactAndProject(client, positioned);
    await advancePartitionOffset(client, command);
    await insertEvents(client, positioned);
    return {
      appended: positioned.length,
      duplicates: fresh.length - newEvents.length,
      alreadyCommitted,
      erased,
      recorded: summarizeRecorded(positioned.map((p) => p.event)),
    };
  }

  /**
   * Redacts the batch before anything of it is written (each event stays in
   * the schema version it was received in, which is how it is stored), then
   * projects it, upcast once to the current version, into the read model.
   */
  private async redactAndProject(client: PoolClient, positioned: PositionedEvent[]): Promise<void> {
    const state = await loadReadModelState(
      client,
      positioned.map((p) => p.event),
    );
    const redacted = redactBatch(
      positioned.map((p) => p.event),
      this.redaction,
      { rows: state.invocations.values() },
    );
    positioned.forEach((p, i) => (p.event = redacted[i]));
    const current = redacted.map((event) => upcastToolEvent(event));
    await this.redactEarlyResults(client, state, current);
    await writeReadModelChanges(client, projectEvents(state, current, this.tokens), 'events');
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
      state.invocations.set(key, withRecordedResult(row, redacted, this.tokens));
    }
  }
}
