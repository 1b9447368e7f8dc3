import { upcastToolEvent, type ToolEvent } from '@toolhistory/contract';
import type { TokenCounter } from '../projection/invocation-tokens';
import { projectEvents } from '../projection/evolve-read-model';
import { resultsAwaitingTheirCall, withRecordedResult } from '../projection/recorded-result';
import { redactBatch } from '../redaction/redact-batch';
import { redactEarlyResult } from '../redaction/redact-event';
import type { RedactionPolicy } from '../redaction/redaction-policy';
import type { Offset, OffsetEvent, OffsetGap, RecordBatchCommand, RecordBatchOutcome, RecordingStore } from '../ports/recording-store.port';
import type { OpenedStreams, ReadModelInUnit, RecordingStorage, RecordingUnit } from '../ports/recording-unit.port';
import { decideOffsets } from './partition-offset';
import { type ReasoningRules, type ReasoningStep, setReasoningApart } from '../reasoning/reasoning-apart';
import { reasoningRulesOf } from '../reasoning/reasoning-rules';
import { DEFAULT_REPLAY_POLICY } from '../replay/replay-policy';
import { emptySummary, summarizeRecorded } from './recorded-summary';

export interface RecordingRules {
  redaction: RedactionPolicy;
  /** Counts the tokens of the invocations projected in the same unit. */
  tokens: TokenCounter;
  /** How long a round's reasoning state rests (reasoning-apart.ts); default: the default policy's (until the turn ends). */
  reasoning?: ReasoningRules;
}

/** The batch's events redacted, and the read model to project them into when it is written in the same unit. */
interface Redacted {
  events: OffsetEvent[];
  readModel?: ReadModelInUnit;
}

/**
 * Recording, whatever the store: one partition batch in one unit of work
 * (PostgreSQL: one transaction with the read model and the offset;
 * EventStoreDB: idempotent appends, then the offset). The order and the
 * rules are here; what each step does in a store is its RecordingUnit's.
 */
export class RecordBatch implements RecordingStore {
  constructor(
    private readonly storage: RecordingStorage,
    private readonly rules: RecordingRules,
  ) {}

  recordBatch(command: RecordBatchCommand): Promise<RecordBatchOutcome | OffsetGap> {
    return this.storage.inUnitOfWork(command, (unit) => this.record(unit, command));
  }

  committedOffsets(consumerGroup: string, topic: string): Promise<Map<number, Offset>> {
    return this.storage.committedOffsets(consumerGroup, topic);
  }

  /**
   * Decide offsets, dedupe, open the streams, redact, set reasoning apart,
   * project, advance, append. The append comes last: with PostgreSQL the
   * global append lock is then held only for the insert and the commit (ADR 002).
   */
  private async record(unit: RecordingUnit, command: RecordBatchCommand): Promise<RecordBatchOutcome | OffsetGap> {
    const decision = decideOffsets(await unit.storedOffset(), command);
    if (decision.kind === 'gap') return decision;
    const { fresh, alreadyCommitted } = decision;
    if (decision.upToDate) return { appended: 0, duplicates: 0, alreadyCommitted, erased: 0, recorded: emptySummary() };

    const unseen = await unit.withoutRecorded(fresh);
    const { open, erased } = await openStreams(unit, unseen);
    const redacted = this.apartFromReasoning(await this.redact(unit, open));
    await this.project(redacted);
    await unit.keepReasoning(redacted.reasoning);
    await unit.advance(command.nextOffset);
    const appended = await unit.append(redacted.events);
    return {
      appended: appended.written.length,
      duplicates: fresh.length - unseen.length + appended.duplicates,
      alreadyCommitted,
      erased: erased + appended.erased,
      recorded: summarizeRecorded(appended.written),
    };
  }

  /**
   * Redacts the batch before anything of it rests, each event in the schema
   * version it was received in (which is how it is stored), a result by its
   * call's tool rule when the call is in the batch or was recorded before.
   */
  private async redact(unit: RecordingUnit, events: readonly OffsetEvent[]): Promise<Redacted> {
    if (events.length === 0) return { events: [] };
    const before = await unit.recordedBefore(events.map((m) => m.event));
    const redacted = redactBatch(
      events.map((m) => m.event),
      this.rules.redaction,
      before.toolNames,
    );
    return { events: events.map((m, i) => ({ ...m, event: redacted[i] })), readModel: before.readModel };
  }

  /** Each response's reasoning state off its event: what rests apart (and what goes) is the unit's to write. */
  private apartFromReasoning(redacted: Redacted): Redacted & { reasoning: ReasoningStep[] } {
    const apart = setReasoningApart(
      redacted.events.map((m) => m.event),
      this.rules.reasoning ?? reasoningRulesOf(DEFAULT_REPLAY_POLICY),
      this.rules.tokens,
    );
    return { ...redacted, events: redacted.events.map((m, i) => ({ ...m, event: apart.events[i] })), reasoning: apart.steps };
  }

  /**
   * Projects the redacted batch, upcast once to the current version, into
   * the read model when the unit writes it; otherwise the read model
   * follows the store (the projector), and there is nothing to do here.
   */
  private async project({ events, readModel }: Redacted): Promise<void> {
    if (!readModel) return;
    const current = events.map((m) => upcastToolEvent(m.event));
    await this.redactEarlyResults(readModel, current);
    await readModel.write(projectEvents(readModel.state, current, this.rules.tokens));
  }

  /**
   * Results recorded in an earlier batch than their call were redacted by
   * the default rule; the call now names the tool, so the stored result gets
   * the tool's rule, in the store and in the row about to be updated.
   */
  private async redactEarlyResults(readModel: ReadModelInUnit, events: readonly ToolEvent[]): Promise<void> {
    const waiting = resultsAwaitingTheirCall(readModel.state, events);
    if (waiting.size === 0) return;
    for (const stored of await readModel.storedEvents([...waiting.keys()])) {
      // The payload is in the version it was received in. A result has the
      // same shape in every supported version (the call below would not
      // compile otherwise), so it is redacted as stored and written back in
      // its own version: stored events are never rewritten to a newer one.
      if (stored.type !== 'ToolResultReceived') continue;
      const { key, row, toolName } = waiting.get(stored.eventId.toLowerCase())!;
      const redacted = redactEarlyResult(stored, this.rules.redaction, toolName);
      if (redacted === null) continue;
      await readModel.rewrite(redacted);
      readModel.state.invocations.set(key, withRecordedResult(row, redacted, this.rules.tokens));
    }
  }
}

/** Events of erased conversations are dropped, so an erasure stays final; nothing to claim when nothing is new. */
function openStreams(unit: RecordingUnit, events: readonly OffsetEvent[]): Promise<OpenedStreams> {
  return events.length === 0 ? Promise.resolve({ open: [], erased: 0 }) : unit.openStreams(events);
}
