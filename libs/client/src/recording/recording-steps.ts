import type { PublishedEvent, RunPublisher } from '../run-publisher';
import type { ApprovalDecision, RecordedCall, RecordedDecision, RecordedResult, RunRecord } from './recorded-run';

/** A step's record with when it happened (default: when it is published). */
export type Timed<T> = T & { occurredAt?: Date | string };

/** What the steps take of the recording's options. */
interface StepOptions {
  decidedBy?: string;
  approvalReason?: (call: RecordedCall) => string | undefined;
}

/**
 * A run's steps as the publisher's events, published at once (RunRecording
 * puts them in order): the one place that turns recorded calls, results and
 * approvals into RunPublisher calls.
 */
export class RecordingSteps {
  constructor(
    private readonly run: RunPublisher,
    private readonly options: StepOptions,
  ) {}

  /** A round's calls (ToolCallRequested), in one request. */
  calls(calls: ReadonlyArray<Timed<RecordedCall>>): Promise<PublishedEvent[]> {
    return this.run.toolCalls(
      calls.map(({ roundIndex, sequenceIndex, toolCallId, toolName, arguments: args, occurredAt }) => ({
        roundIndex,
        sequenceIndex,
        toolCallId,
        toolName,
        arguments: args,
        ...at(occurredAt),
      })),
    );
  }

  /** Results (ToolResultReceived), in one request; each names its tool (a resumed call's is another run's: the publisher learns it only here). */
  results(results: ReadonlyArray<Timed<RecordedResult>>): Promise<PublishedEvent[]> {
    return this.run.toolResults(
      results.map(({ roundIndex, sequenceIndex, toolCallId, toolName, result, isError, occurredAt }) => ({
        roundIndex,
        sequenceIndex,
        toolCallId,
        ...(toolName ? { toolName } : {}),
        result,
        isError,
        ...at(occurredAt),
      })),
    );
  }

  /** The call waits for a person's approval (ToolApprovalRequested): `reason`, else the option's. */
  approvalRequest(call: Timed<RecordedCall>, reason?: string): Promise<PublishedEvent> {
    const why = reason ?? this.options.approvalReason?.(call);
    return this.run.approvalRequested({
      roundIndex: call.roundIndex,
      sequenceIndex: call.sequenceIndex,
      toolCallId: call.toolCallId,
      ...(why === undefined ? {} : { reason: why }),
      ...at(call.occurredAt),
    });
  }

  /** A person's answer (ToolApprovalDecided): who decided, else the option's. */
  decision(decision: Timed<RecordedDecision> & Pick<ApprovalDecision, 'decidedBy'>): Promise<PublishedEvent> {
    const decidedBy = decision.decidedBy ?? this.options.decidedBy;
    return this.run.approvalDecided({
      roundIndex: decision.roundIndex,
      sequenceIndex: decision.sequenceIndex,
      toolCallId: decision.toolCallId,
      approved: decision.approved,
      ...(decision.reason === undefined ? {} : { reason: decision.reason }),
      ...(decidedBy === undefined ? {} : { decidedBy }),
      ...at(decision.occurredAt),
    });
  }

  /**
   * A whole record, in order: the answers, the resumed calls' results, then
   * each round's calls, results and approval requests (none for a call
   * without an id: the contract names an approval's call by its id).
   */
  async record(record: RunRecord): Promise<void> {
    for (const decision of record.decisions) await this.decision(decision);
    if (record.resumedResults.length > 0) await this.results(record.resumedResults);
    for (const round of record.rounds) {
      await this.calls(round.calls);
      if (round.results.length > 0) await this.results(round.results);
      for (const call of round.approvalRequests) if (call.toolCallId !== '') await this.approvalRequest(call);
    }
  }
}

const at = (occurredAt: Date | string | undefined) => (occurredAt === undefined ? {} : { occurredAt });
