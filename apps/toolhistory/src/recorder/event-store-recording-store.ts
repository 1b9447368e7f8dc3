import type { StoredToolEvent } from '@toolhistory/contract';
import {
  addSummary,
  emptySummary,
  summarizeRecorded,
  conversationKeyString,
  EventStore,
  Offset,
  PartitionRef,
  RecordBatchCommand,
  RecordBatchOutcome,
  hasResultWithoutItsCall,
  RecordingStore,
  redactBatch,
  RedactionPolicy,
  StreamRef,
  decideOffsets,
  NO_STORED_OFFSET,
  OffsetGap,
} from '@toolhistory/domain';
import { AppError, ErrorCode } from '@toolhistory/errors';

/** Where the recorder resumes: kept beside the read model. */
export interface ConsumerOffsets {
  committed(consumerGroup: string, topic: string): Promise<Map<number, Offset>>;
  advance(partition: PartitionRef, nextOffset: Offset): Promise<void>;
}

/**
 * Recording into an event store that is not the read model's database
 * (EventStoreDB): each conversation's new events are redacted and appended
 * (idempotent by eventId), then the partition's offset moves. A crash in
 * between redelivers the batch, and the repeats are skipped by eventId, so
 * the effect is still exactly once. The read model follows the store
 * through the projector, not here.
 *
 * Unlike the PostgreSQL store, a result recorded before its call keeps the
 * default rule: stored events cannot be rewritten here once the call names
 * the tool (see the README).
 */
export class EventStoreRecordingStore implements RecordingStore {
  constructor(
    private readonly events: EventStore,
    private readonly offsets: ConsumerOffsets,
    private readonly redaction: RedactionPolicy,
  ) {}

  committedOffsets(consumerGroup: string, topic: string): Promise<Map<number, Offset>> {
    return this.offsets.committed(consumerGroup, topic);
  }

  async recordBatch(command: RecordBatchCommand): Promise<RecordBatchOutcome | OffsetGap> {
    const stored = (await this.offsets.committed(command.consumerGroup, command.topic)).get(command.partition);
    const decision = decideOffsets(stored === undefined ? NO_STORED_OFFSET : BigInt(stored), command);
    if (decision.kind === 'gap') return decision;
    const { fresh, alreadyCommitted } = decision;
    const outcome: RecordBatchOutcome = { appended: 0, duplicates: 0, alreadyCommitted, erased: 0, recorded: emptySummary() };
    if (decision.upToDate) return outcome;

    const streams = new Map<string, { ref: StreamRef; events: StoredToolEvent[] }>();
    for (const { event } of fresh) {
      const key = conversationKeyString(event);
      const entry = streams.get(key) ?? { ref: { tenantId: event.tenantId, conversationId: event.conversationId }, events: [] };
      entry.events.push(event);
      streams.set(key, entry);
    }
    // Kept beside each event in the store (EventStoreDB: its metadata), never in the payload.
    const traceparents = new Map(fresh.flatMap((m) => (m.traceparent ? [[m.event.eventId.toLowerCase(), m.traceparent] as const] : [])));
    for (const { ref, events } of streams.values()) {
      try {
        const redacted = await this.redacted(ref, events);
        const appended = await this.events.append(ref, redacted, { traceparents });
        outcome.appended += appended.appended;
        outcome.duplicates += appended.duplicates;
        // The store skips duplicates wherever they are; what it appended is then the stream's tail.
        const written =
          appended.duplicates === 0 ? redacted : (await this.events.readStream(ref)).slice(-appended.appended).map((r) => r.event);
        if (appended.appended > 0) addSummary(outcome.recorded, summarizeRecorded(written));
      } catch (error) {
        if (!(error instanceof AppError && error.code === ErrorCode.StreamErased)) throw error;
        outcome.erased += events.length;
      }
    }
    await this.offsets.advance(command, command.nextOffset);
    return outcome;
  }

  /** Redacted as received (each in its own schema version), a result by its call's tool rule when the call is known. */
  private async redacted(ref: StreamRef, events: readonly StoredToolEvent[]): Promise<StoredToolEvent[]> {
    const calls = hasResultWithoutItsCall(events) ? (await this.events.readStream(ref)).map((r) => r.event) : [];
    return redactBatch(events, this.redaction, { calls });
  }
}
