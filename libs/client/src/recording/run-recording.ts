import { citedSourcesFrom } from '../cited-sources';
import type { PublishedEvent, RunPublisher } from '../run-publisher';
import type { RunFailureDetail, TokenUsage } from '../tool-event-types';
import { boundedUsage, errorText } from './contract-fit';
import { OrderedPublishQueue, type PublishFailure } from './ordered-publish-queue';
import { RecordedCalls } from './recorded-calls';
import type {
  ApprovalDecision,
  AskedCall,
  RecordedCall,
  RecordedDecision,
  RecordedResult,
  RecordedRound,
  ResponseReasoning,
  RunRecord,
} from './recorded-run';
import { RecordingSteps, type Timed } from './recording-steps';

/**
 * What happens to a run's later steps once one could not be published:
 * `publish-the-rest` publishes them (and the end) as if nothing happened;
 * `end-as-failed` skips them, and the run's end is RunFailed
 * `recording_failed` (best effort), so no half-recorded run looks complete.
 */
export type AfterFailedStep = 'publish-the-rest' | 'end-as-failed';

export interface RunRecordingOptions {
  /** Default `publish-the-rest`. */
  afterFailedStep?: AfterFailedStep;
  /** The round index of the run's first round: 0, unless the run goes on with the numbering of the run it resumes. */
  firstRoundIndex?: number;
  /** Who decided, recorded with each decision that does not say. */
  decidedBy?: string;
  /** The reason recorded with a call's ToolApprovalRequested, when the step gives none. */
  approvalReason?: (call: RecordedCall) => string | undefined;
  /**
   * true: RunCompleted's `citedSources` are the `[sourceN]` the answer cites
   * (`[]` when it cites none); a run that ends without an answer (after
   * tools, or stopped for approval) leaves them out, as a later run's
   * answer may cite its results. Default false: left out.
   */
  citedSourcesFromAnswer?: boolean;
  /** RunCompleted's finishReason, whatever the run did (default: derived, see RunEnd). */
  finishReason?: string;
  /** RunCompleted's finishReason when the run ended right after executing tools; default `tool_limit`. */
  finishReasonAfterTools?: string;
  /** RunCompleted's finishReason when the run stopped for a person's approval; default: as after tools. */
  finishReasonAwaitingApproval?: string;
  /** Hears of every step that could not be published. */
  onPublishError?: (failure: PublishFailure) => void;
}

/** What a model call returned, as the run keeps count of it. */
export interface ModelResponse {
  /** The calls it asked for that the client runs (function calls), in the model's order. */
  calls?: readonly AskedCall[];
  /** Its tokens, when the provider reported them. */
  usage?: TokenUsage;
  /** Its text: the run's answer when it asked for no tools. */
  text?: string;
  /** The id the model gave its message. */
  messageId?: string;
  /** The provider's id of the response. */
  responseId?: string;
  /**
   * The reasoning state the provider handed back with the calls (reasoning
   * models): with calls, the round's ModelResponseReceived (its text and
   * this) is published before them, so that replay can give it back.
   */
  reasoning?: ResponseReasoning;
  /** When the model answered; default: when its response is published. */
  occurredAt?: Date | string;
}

/** How the run ended; every field has a default from what the run recorded. */
export interface RunEnd {
  /** Default: the last response's message id, else its response id, else the runId. */
  assistantMessageId?: string;
  /** Default: the option's, else `stop` when the run answered, else as after tools or awaiting approval. */
  finishReason?: string;
  /** Default: the tokens of every model response seen; left out when there are none; bounded to the contract's count. */
  usage?: readonly TokenUsage[];
  /** The answer's text, for its cited sources (a function is asked only when they are recorded); default: the last response's text. */
  answerText?: string | (() => string | undefined);
  /** The run stopped for a person's approval; default: the record it published said so. */
  stoppedForApproval?: boolean;
  /** The run's last model response asked for tools; default: the last response seen (or the record's). */
  endedAfterTools?: boolean;
  occurredAt?: Date | string;
}

export interface FailedRunEnd {
  error: RunFailureDetail;
  /** Default: the tokens of every model response seen (left out when none); null: left out. */
  usage?: readonly TokenUsage[] | null;
  occurredAt?: Date | string;
}

/** An end, or what makes it once the run's last steps are published (straight to the broker, in the end's turn). */
type EndOf<T> = T | ((steps: RecordingSteps) => Promise<T>);

const RECORDING_FAILED = 'recording_failed';

/**
 * The one way a run is recorded, whatever framework ran it: adapters map
 * their framework's callbacks or items onto its steps. It numbers the
 * rounds, finds a result's call, publishes every step in order (one after
 * the other, whichever callback or thread asked), ends the run exactly once
 * with the finish reason, usage and cited sources the run earned, and says
 * when all of it is acknowledged (`recorded`, `settled()`).
 */
export class RunRecording {
  readonly calls: RecordedCalls;
  /** Settles once the run's end is published: rejects with the first step (or end) that could not be. */
  readonly recorded: Promise<void>;
  private readonly queue: OrderedPublishQueue;
  private readonly steps: RecordingSteps;
  private readonly responses: ModelResponse[] = [];
  private record: Pick<RunRecord, 'awaitingApproval' | 'endedAfterTools'> | undefined;
  private end: Promise<PublishedEvent | undefined> | undefined;
  private settle!: { resolve: () => void; reject: (error: unknown) => void };

  constructor(
    readonly run: RunPublisher,
    private readonly options: RunRecordingOptions = {},
  ) {
    this.calls = new RecordedCalls(options.firstRoundIndex);
    this.queue = new OrderedPublishQueue(options.onPublishError);
    this.steps = new RecordingSteps(run, options);
    this.recorded = new Promise<void>((resolve, reject) => (this.settle = { resolve, reject }));
    // A caller that never looks at `recorded` must not get an unhandled rejection; one that does still sees it.
    this.recorded.catch(() => undefined);
  }

  /** Whether the run's end was asked for (RunCompleted or RunFailed). */
  get ended(): boolean {
    return this.end !== undefined;
  }

  /** Whether a step could not be published so far. */
  get failed(): boolean {
    return this.queue.failed;
  }

  /** The tokens of each model response seen, in order. */
  get usage(): TokenUsage[] {
    return this.responses.flatMap((response) => (response.usage === undefined ? [] : [response.usage]));
  }

  /** A model call returned: its tokens and text are kept, and its calls (if any) are the next round, numbered, not yet published. */
  response(response: ModelResponse): RecordedRound | undefined {
    this.responses.push(response);
    const round = this.calls.openRound(response.calls ?? []);
    if (round !== undefined && response.reasoning !== undefined) {
      const recorded = { reasoning: response.reasoning, ...(response.text === undefined ? {} : { text: response.text }) };
      round.response = recorded;
      const step = { ...recorded, roundIndex: round.roundIndex, ...at(response.occurredAt) };
      // Queued now, so it goes before the round's calls whoever publishes them; a failure is the queue's to report (settled()).
      this.step(`ModelResponseReceived round ${round.roundIndex}`, () => this.steps.modelResponse(step)).catch(() => undefined);
    }
    return round;
  }

  /** Publishes a round's calls (ToolCallRequested), in one request. */
  publishCalls(calls: ReadonlyArray<Timed<RecordedCall>>): Promise<PublishedEvent[] | undefined> {
    return this.step(describe('ToolCallRequested', calls), () => this.steps.calls(calls));
  }

  /** Publishes one call (ToolCallRequested) on its own. */
  publishCall(call: Timed<RecordedCall>): Promise<PublishedEvent | undefined> {
    return this.step(describe('ToolCallRequested', [call]), async () => (await this.steps.calls([call]))[0]);
  }

  /** Publishes results (ToolResultReceived), in one request; each answers its call. */
  publishResults(results: ReadonlyArray<Timed<RecordedResult>>): Promise<PublishedEvent[] | undefined> {
    return this.step(describe('ToolResultReceived', results), () => this.steps.results(results));
  }

  /** Publishes one result (ToolResultReceived) on its own. */
  publishResult(result: Timed<RecordedResult>): Promise<PublishedEvent | undefined> {
    return this.step(describe('ToolResultReceived', [result]), async () => (await this.steps.results([result]))[0]);
  }

  /**
   * Publishes that the call waits for a person's approval
   * (ToolApprovalRequested), with `reason`, else the option's. Nothing for a
   * call without an id: the contract names an approval's call by its id.
   */
  publishApprovalRequest(call: Timed<RecordedCall>, reason?: string): Promise<PublishedEvent | undefined> | undefined {
    if (call.toolCallId === '') return undefined;
    return this.step(describe('ToolApprovalRequested', [call]), () => this.steps.approvalRequest(call, reason));
  }

  /** Publishes a person's answer to the call (ToolApprovalDecided), possibly a call of an earlier run. Nothing for a call without an id. */
  publishDecision(
    decision: Timed<RecordedDecision> & Pick<ApprovalDecision, 'decidedBy'>,
  ): Promise<PublishedEvent | undefined> | undefined {
    if (decision.toolCallId === '') return undefined;
    return this.step(describe('ToolApprovalDecided', [decision]), () => this.steps.decision(decision));
  }

  /** Ends the run with RunCompleted, once: a later complete() or fail() returns this one's outcome. */
  complete(end: EndOf<RunEnd> = {}): Promise<PublishedEvent | undefined> {
    return this.ending('RunCompleted', async () => {
      const chosen = typeof end === 'function' ? await end(this.steps) : end;
      return this.run.complete(this.completionOf(chosen));
    });
  }

  /** Ends the run with RunFailed, once: a later complete() or fail() returns this one's outcome. */
  fail(failure: EndOf<FailedRunEnd>): Promise<PublishedEvent | undefined> {
    return this.ending('RunFailed', async () => {
      const chosen = typeof failure === 'function' ? await failure(this.steps) : failure;
      return this.run.fail({ error: chosen.error, ...this.usageOf(chosen.usage), ...at(chosen.occurredAt) });
    });
  }

  /**
   * Notes what a record (a framework that keeps the run, read once it
   * returned) says of how the run stopped: the defaults of its end. The
   * record itself is published in the end's turn (`steps.record(record)` in
   * the function given to complete() or fail()).
   */
  noteRecord(record: Pick<RunRecord, 'awaitingApproval' | 'endedAfterTools'>): void {
    this.record = { awaitingApproval: record.awaitingApproval, endedAfterTools: record.endedAfterTools };
  }

  /**
   * Resolves once every step so far is in the broker, with the
   * acknowledgements in publication order; rejects with
   * ToolHistoryPublishError when any could not be published.
   */
  settled(): Promise<PublishedEvent[]> {
    return this.queue.settled();
  }

  /** Records a failure that is no publication (e.g. the adapter used wrongly): reported, and kept for settled(). */
  reportFailure(failure: PublishFailure): void {
    this.queue.recordFailure(failure);
  }

  /**
   * A step, in order. Nothing after the run's end; a run that ends as
   * failed also skips it once a step failed, or once its end was asked for
   * (a step still waiting then, e.g. when a stream is aborted, is not the
   * run's any more).
   */
  private step<T extends PublishedEvent | readonly PublishedEvent[] | undefined>(
    description: string,
    publish: () => Promise<T>,
  ): Promise<T | undefined> {
    if (this.end !== undefined) return Promise.resolve(undefined);
    return this.queue.push(description, async () => (this.endsAsFailed() && (this.queue.failed || this.ended) ? undefined : publish()));
  }

  private endsAsFailed(): boolean {
    return this.options.afterFailedStep === 'end-as-failed';
  }

  private ending(type: 'RunCompleted' | 'RunFailed', publish: () => Promise<PublishedEvent>): Promise<PublishedEvent | undefined> {
    if (this.end !== undefined) return this.end;
    this.end = this.queue.push(type, () => (this.endsAsFailed() && this.queue.failed ? this.recordingFailed() : publish()));
    void this.end.then(
      () => this.settleRecorded(),
      () => this.settleRecorded(),
    );
    return this.end;
  }

  /** After a step failed: RunFailed `recording_failed`, best effort (the broker is likely still away, and the first failure says why). */
  private async recordingFailed(): Promise<PublishedEvent | undefined> {
    const cause = this.queue.firstFailure?.error;
    try {
      return await this.run.fail({
        error: { code: RECORDING_FAILED, message: `a step could not be recorded: ${errorText(cause)}` },
        ...this.usageOf(undefined),
      });
    } catch {
      return undefined;
    }
  }

  private settleRecorded(): void {
    const failure = this.queue.firstFailure;
    if (failure === undefined) this.settle.resolve();
    else this.settle.reject(failure.error);
  }

  private completionOf(end: RunEnd) {
    const last = this.responses.at(-1);
    const stoppedForApproval = end.stoppedForApproval ?? this.record?.awaitingApproval ?? false;
    const endedAfterTools = end.endedAfterTools ?? this.record?.endedAfterTools ?? (last?.calls?.length ?? 0) > 0;
    const answered = !stoppedForApproval && !endedAfterTools;
    const afterTools = this.options.finishReasonAfterTools ?? 'tool_limit';
    const derived = answered ? 'stop' : stoppedForApproval ? (this.options.finishReasonAwaitingApproval ?? afterTools) : afterTools;
    const cites = this.options.citedSourcesFromAnswer && answered;
    const answerText = cites ? (typeof end.answerText === 'function' ? end.answerText() : (end.answerText ?? last?.text)) : undefined;
    return {
      assistantMessageId: end.assistantMessageId ?? last?.messageId ?? last?.responseId ?? this.run.scope.runId,
      finishReason: end.finishReason ?? this.options.finishReason ?? derived,
      ...this.usageOf(end.usage),
      ...(answerText === undefined ? {} : { citedSources: citedSourcesFrom(answerText) }),
      ...at(end.occurredAt),
    };
  }

  private usageOf(given: readonly TokenUsage[] | null | undefined): { usage?: TokenUsage[] } {
    if (given === null) return {};
    const usage = given ?? this.usage;
    return usage.length === 0 ? {} : { usage: boundedUsage(usage) };
  }
}

const at = (occurredAt: Date | string | undefined) => (occurredAt === undefined ? {} : { occurredAt });

/** What a step publishes, for the failure it may be: `ToolResultReceived round 0 call 1 (get_customer call_b)`. */
function describe(
  type: string,
  calls: ReadonlyArray<Pick<RecordedCall, 'roundIndex' | 'sequenceIndex' | 'toolName' | 'toolCallId'>>,
): string {
  const each = calls.map(
    (call) => `round ${call.roundIndex} call ${call.sequenceIndex} (${call.toolName}${call.toolCallId ? ` ${call.toolCallId}` : ''})`,
  );
  return `${type} ${each.join(', ')}`;
}
