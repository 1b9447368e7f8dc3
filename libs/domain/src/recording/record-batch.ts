import { upcastToolEvent, type StoredToolEvent, type ToolEvent } from '@toolhistory/contract';
import { AppError, ErrorCode, rejected } from '@toolhistory/errors';
import { keyScopeOf, openEvents, sealEvents, storedForm } from '../encryption/sealed-payloads';
import type { PayloadVault } from '../ports/payload-vault.port';
import { NO_RETENTION, payloadExpiresAt, retentionOf, type RetentionPolicy } from '../retention/retention-policy';
import type { TokenCounter } from '../projection/invocation-tokens';
import { projectEvents } from '../projection/evolve-read-model';
import { resultsAwaitingTheirCall, withRecordedResult } from '../projection/recorded-result';
import { batchToolNames, redactBatch, type RecordedToolNames } from '../redaction/redact-batch';
import { toolNameFor } from '../redaction/tool-names';
import { redactEarlyResult } from '../redaction/redact-event';
import type { RedactionPolicy } from '../redaction/redaction-policy';
import type {
  Offset,
  OffsetEvent,
  OffsetGap,
  PartitionRef,
  RecordBatchCommand,
  RecordBatchOutcome,
  RecordingStore,
} from '../ports/recording-store.port';
import type { OpenedStreams, ReadModelInUnit, RecordingStorage, RecordingUnit } from '../ports/recording-unit.port';
import { decideOffsets, type OffsetDecision } from './partition-offset';
import { type ReasoningRules, type ReasoningStep, sealKeptReasoning, setReasoningApart } from '../reasoning/reasoning-apart';
import { reasoningRulesOf } from '../reasoning/reasoning-rules';
import { DEFAULT_REPLAY_POLICY } from '../replay/replay-policy';
import { emptySummary, summarizeRecorded } from './recorded-summary';

export interface RecordingRules {
  redaction: RedactionPolicy;
  /** Counts the tokens of the invocations projected in the same unit. */
  tokens: TokenCounter;
  /** How long a round's reasoning state rests (reasoning-apart.ts); default: the default policy's (until the turn ends). */
  reasoning?: ReasoningRules;
  /**
   * Encryption at rest (docs/adr/033): every payload sealed under a data key
   * of its conversation and retention period before it rests; none: payloads
   * rest in clear (ENCRYPTION_AT_REST=off).
   */
  vault?: PayloadVault;
  /** How long payloads rest, counted from when this service records them. */
  retention?: RetentionPolicy;
  /** The recording time (ms since the epoch). */
  now?: () => number;
}

/** The batch's events redacted (and sealed), and the read model to project them into when it is written in the same unit. */
interface Redacted {
  events: OffsetEvent[];
  readModel?: ReadModelInUnit;
  /** Where the batch's tools are named: the batch and what was recorded before. */
  toolNames: RecordedToolNames;
}

/** The redacted batch with each response's reasoning state taken off its event: the steps say what rests apart. */
type Apart = Redacted & { reasoning: ReasoningStep[] };

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
    return this.recordBatches([command]).then(([outcome]) => outcome);
  }

  /**
   * One batch of each of several partitions in one unit of work (with
   * PostgreSQL: one transaction, one commit, one statement per step for
   * all of them; recording/grouped-recording.ts gathers them). Each batch
   * gets the outcome it would get alone, in the order given.
   */
  recordBatches(commands: readonly RecordBatchCommand[]): Promise<Array<RecordBatchOutcome | OffsetGap>> {
    const partitions = commands.map(partitionOf);
    const named = new Set(partitions.map((p) => JSON.stringify([p.consumerGroup, p.topic, p.partition])));
    if (named.size !== partitions.length) throw new AppError(ErrorCode.Internal, 'a unit of work records one batch of each partition');
    return this.storage.inUnitOfWork(partitions, (unit) => this.record(unit, commands));
  }

  committedOffsets(consumerGroup: string, topic: string): Promise<Map<number, Offset>> {
    return this.storage.committedOffsets(consumerGroup, topic);
  }

  /**
   * Decide offsets, dedupe, open the streams, redact, set reasoning apart,
   * project, advance, append. The append comes last: with PostgreSQL the
   * global append lock is then held only for the insert and the commit (ADR 002).
   */
  private async record(unit: RecordingUnit, commands: readonly RecordBatchCommand[]): Promise<Array<RecordBatchOutcome | OffsetGap>> {
    // Offset rows in partition order, so units of overlapping partitions (a rebalance) never wait on each other crosswise.
    const decisions = new Map<RecordBatchCommand, OffsetDecision>();
    for (const command of [...commands].sort(byPartition))
      decisions.set(command, decideOffsets(await unit.storedOffset(partitionOf(command)), command));
    const recording = commands.filter((c) => {
      const decision = decisions.get(c)!;
      return decision.kind !== 'gap' && !decision.upToDate;
    });
    if (recording.length === 0) return commands.map((c) => notRecorded(decisions.get(c)!));

    const freshOf = new Map(recording.map((c) => [c, (decisions.get(c) as FreshEvents).fresh]));
    const unseen = await unit.withoutRecorded(recording.flatMap((c) => freshOf.get(c)!));
    const { open } = await openStreams(unit, unseen);
    const redacted = await this.seal(this.apartFromReasoning(await this.redact(unit, open)));
    await this.project(redacted);
    await unit.keepReasoning(redacted.reasoning);
    for (const command of recording) await unit.advance(partitionOf(command), command.nextOffset);
    // Sealed payloads rest without their members: the sealed note holds them.
    const appended = await unit.append(redacted.events.map((m) => ({ ...m, event: storedForm(m.event) })));
    if (recording.length > 1 && (appended.duplicates > 0 || appended.erased > 0))
      throw new AppError(
        ErrorCode.Internal,
        'a store that finds duplicates or erased streams as it appends records one partition per unit',
      );

    // Each batch's share, told by its events (the steps keep the objects they are given, and drop repeats).
    const unseenSet = new Set(unseen);
    const openSet = new Set(open);
    const batchOfId = new Map<string, RecordBatchCommand>();
    for (const c of recording) for (const m of freshOf.get(c)!) if (openSet.has(m)) batchOfId.set(m.event.eventId.toLowerCase(), c);
    return commands.map((c) => {
      const decision = decisions.get(c)!;
      const fresh = freshOf.get(c);
      if (fresh === undefined) return notRecorded(decision);
      const written = appended.written.filter((e) => batchOfId.get(e.eventId.toLowerCase()) === c);
      const unseenHere = fresh.filter((m) => unseenSet.has(m)).length;
      const openHere = fresh.filter((m) => openSet.has(m)).length;
      return {
        appended: written.length,
        duplicates: fresh.length - unseenHere + appended.duplicates,
        alreadyCommitted: (decision as FreshEvents).alreadyCommitted,
        erased: unseenHere - openHere + appended.erased,
        recorded: summarizeRecorded(written),
      };
    });
  }

  /**
   * Redacts the batch before anything of it rests, each event in the schema
   * version it was received in (which is how it is stored), a result by its
   * call's tool rule when the call is in the batch or was recorded before.
   */
  private async redact(unit: RecordingUnit, events: readonly OffsetEvent[]): Promise<Redacted> {
    if (events.length === 0) return { events: [], toolNames: {} };
    const before = await unit.recordedBefore(events.map((m) => m.event));
    // Read twice (redaction, retention): the rows may come as a one-pass iterable.
    const toolNames = { calls: [...(before.toolNames.calls ?? [])], rows: [...(before.toolNames.rows ?? [])] };
    const redacted = redactBatch(
      events.map((m) => m.event),
      this.rules.redaction,
      toolNames,
    );
    return { events: events.map((m, i) => ({ ...m, event: redacted[i] })), readModel: before.readModel, toolNames };
  }

  /**
   * Seals each redacted payload under the data key of its conversation and
   * retention period (its tool's, channel's, tenant's or the default's,
   * the shortest, counted from now), before anything of it rests. The
   * events keep their payload for projecting; the append stores them sealed.
   */
  private async seal(redacted: Apart): Promise<Apart> {
    const { vault } = this.rules;
    if (vault === undefined || redacted.events.length === 0) return redacted;
    const names = batchToolNames(
      redacted.events.map((m) => m.event),
      redacted.toolNames,
    );
    const recordedAt = (this.rules.now ?? Date.now)();
    const sealed = await sealEvents(
      redacted.events.map((m) => m.event),
      vault,
      (event) => keyScopeOf(event, this.expiryOf(event, toolNameFor(names, event), recordedAt)),
      refuseNul,
    );
    // A response's reasoning state rests under the same key as its text.
    const scopes = new Map(redacted.events.map(({ event }) => [event.eventId, keyScopeOf(event, this.expiryOf(event, null, recordedAt))]));
    const reasoning = await sealKeptReasoning(redacted.reasoning, vault, (eventId) => scopes.get(eventId)!);
    return { ...redacted, events: redacted.events.map((m, i) => ({ ...m, event: sealed[i] })), reasoning };
  }

  private expiryOf(event: StoredToolEvent, toolName: string | null, recordedAtMs: number): string | null {
    const retention = retentionOf(this.rules.retention ?? NO_RETENTION, { tenantId: event.tenantId, channel: event.channel, toolName });
    return payloadExpiresAt(recordedAtMs, retention);
  }

  /** Each response's reasoning state off its event: what rests apart (and what goes) is the unit's to write. */
  private apartFromReasoning(redacted: Redacted): Apart {
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
    for (const { event: stored, recordedAt } of await this.opened(await readModel.storedEvents([...waiting.keys()]))) {
      // The payload is in the version it was received in. A result has the
      // same shape in every supported version (the call below would not
      // compile otherwise), so it is redacted as stored and written back in
      // its own version: stored events are never rewritten to a newer one.
      if (stored.type !== 'ToolResultReceived' || stored.payloadExpired) continue;
      const { key, row, toolName } = waiting.get(stored.eventId.toLowerCase())!;
      const redacted = redactEarlyResult(stored, this.rules.redaction, toolName);
      if (redacted === null) continue;
      // Sealed again under the tool's retention, counted from when the result was recorded.
      const [rewritten] = this.rules.vault
        ? await sealEvents([redacted], this.rules.vault, (e) => keyScopeOf(e, this.expiryOf(e, toolName, Date.parse(recordedAt))))
        : [redacted];
      await readModel.rewrite(storedForm(rewritten));
      readModel.state.invocations.set(key, withRecordedResult(row, rewritten, this.rules.tokens));
    }
  }

  /** Stored events with their payloads opened, when they rest sealed. */
  private async opened(stored: Array<{ event: StoredToolEvent; recordedAt: string }>) {
    if (this.rules.vault === undefined) return stored;
    const events = await openEvents(
      stored.map((s) => s.event),
      this.rules.vault,
    );
    return stored.map((s, i) => ({ ...s, event: events[i] }));
  }
}

/**
 * A NUL character is no text PostgreSQL keeps (its search documents are
 * made of the payloads in clear): refused as unstorable, as the events
 * table refuses it in clear, rather than sealed and left to fail later.
 */
function refuseNul(event: StoredToolEvent, payload: unknown, plaintext: string): void {
  // JSON text escapes a NUL as \u0000: only a payload whose text holds that sequence is walked.
  if (plaintext.includes('\\u0000') && holdsNul(payload))
    throw rejected(ErrorCode.UnstorableEvent, `event ${event.eventId}: a payload holds a NUL character (\\u0000), which cannot be stored`);
}

function holdsNul(value: unknown): boolean {
  if (typeof value === 'string') return value.includes('\u0000');
  if (Array.isArray(value)) return value.some(holdsNul);
  if (typeof value === 'object' && value !== null)
    return Object.entries(value).some(([key, member]) => key.includes('\u0000') || holdsNul(member));
  return false;
}

/** Events of erased conversations are dropped, so an erasure stays final; nothing to claim when nothing is new. */
function openStreams(unit: RecordingUnit, events: readonly OffsetEvent[]): Promise<OpenedStreams> {
  return events.length === 0 ? Promise.resolve({ open: [], erased: 0 }) : unit.openStreams(events);
}

type FreshEvents = Extract<OffsetDecision, { kind: 'record' }>;

/** A batch that records nothing: it starts beyond the stored offset (the gap), or the offset is already past it. */
function notRecorded(decision: OffsetDecision): RecordBatchOutcome | OffsetGap {
  if (decision.kind === 'gap') return decision;
  return { appended: 0, duplicates: 0, alreadyCommitted: decision.alreadyCommitted, erased: 0, recorded: emptySummary() };
}

const partitionOf = ({ consumerGroup, topic, partition }: RecordBatchCommand): PartitionRef => ({ consumerGroup, topic, partition });

function byPartition(a: RecordBatchCommand, b: RecordBatchCommand): number {
  return a.consumerGroup < b.consumerGroup
    ? -1
    : a.consumerGroup > b.consumerGroup
      ? 1
      : a.topic < b.topic
        ? -1
        : a.topic > b.topic
          ? 1
          : a.partition - b.partition;
}
