import type { PublishedEvent, RunPublisher } from '../run-publisher';
import { InvalidToolEventError } from '../tool-history-errors';
import type { ApprovalDecision, RecordedCall, RecordedDecision, RecordedResponse, RecordedResult, RunRecord } from './recorded-run';

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

  /** The model's response that asked for a round's calls (ModelResponseReceived), before them: its text and reasoning state. */
  async modelResponse(response: Timed<RecordedResponse> & { roundIndex: number }): Promise<PublishedEvent> {
    const { reasoning, text, roundIndex, occurredAt } = response;
    const bare = {
      roundIndex,
      provider: reasoning.provider,
      model: reasoning.model,
      ...(text === undefined || text === '' ? {} : { text }),
      ...at(occurredAt),
    };
    const state = {
      ...(reasoning.items === undefined || reasoning.items.length === 0 ? {} : { reasoning: reasoning.items }),
      ...nonEmpty('callSignatures', reasoning.callSignatures),
      ...nonEmpty('callItemIds', reasoning.callItemIds),
    };
    try {
      return await this.run.modelResponse({ ...bare, ...state });
    } catch (error) {
      // State the contract cannot carry (past the event's size, or too many items) is let go rather than the run:
      // the round replays without it, as after its turn, which every provider accepts.
      if (!(error instanceof InvalidToolEventError) || Object.keys(state).length === 0) throw error;
      return this.run.modelResponse(bare);
    }
  }

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
   * each round's model response (when it carried reasoning), calls, results
   * and approval requests (none for a call without an id: the contract names
   * an approval's call by its id).
   */
  async record(record: RunRecord): Promise<void> {
    for (const decision of record.decisions) await this.decision(decision);
    if (record.resumedResults.length > 0) await this.results(record.resumedResults);
    for (const round of record.rounds) {
      if (round.response !== undefined) await this.modelResponse({ ...round.response, roundIndex: round.roundIndex });
      await this.calls(round.calls);
      if (round.results.length > 0) await this.results(round.results);
      for (const call of round.approvalRequests) if (call.toolCallId !== '') await this.approvalRequest(call);
    }
  }
}

const at = (occurredAt: Date | string | undefined) => (occurredAt === undefined ? {} : { occurredAt });

const nonEmpty = <K extends string>(key: K, map: Record<string, string> | undefined) =>
  map === undefined || Object.keys(map).length === 0 ? {} : ({ [key]: map } as Record<K, Record<string, string>>);
