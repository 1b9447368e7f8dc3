import { citedSourcesFrom } from '../cited-sources';
import { boundedUsage, describeRunFailure } from '../openai/openai-completion-mapper';
import { type RunTarget, runOfTarget } from '../run-target';
import type { RunPublisher } from '../tool-event-publisher';
import {
  type AgentsRecordedCall,
  type AgentsRunRecord,
  type AgentsRunState,
  type AgentsRunView,
  agentsRunRecord,
  finalOutputText,
  type ResumePoint,
  resumePointOf,
  runViewOfState,
  type ToolErrorTest,
} from './agents-run-mapper';

export interface AgentsRunRecorderOptions {
  /**
   * The host's id of the user message that started the run: every event
   * carries it, and replay places a run without a final answer after it.
   * Needs a `{ publisher, scope }` target (a RunPublisher's scope is fixed).
   */
  userMessageId?: string;
  /**
   * The host's id of the run's final answer (the replayed tool segment goes
   * right before the host's message of that id). Default: the id the model
   * gave the run's last assistant message, else the id of its last model
   * response, else the runId.
   */
  assistantMessageId?: string | ((result: AgentsRunView, record: AgentsRunRecord) => string);
  /** Default: `stop` when the model answered after the last round's results; `tool_limit` when the run ended right after executing tools, or stopped for an approval. */
  finishReason?: string;
  /** The reason recorded with a call's ToolApprovalRequested (the SDK gives none). */
  approvalReason?: (call: AgentsRecordedCall) => string | undefined;
  /** Who decided, recorded with each ToolApprovalDecided of a resumed run. */
  decidedBy?: string;
  /** Which outputs are errors; default isSdkToolError (the SDK's default error texts, and toolErrorFunction's marks). */
  isToolError?: ToolErrorTest;
  /**
   * true: RunCompleted's `citedSources` are the `[sourceN]` the run's final
   * output cites (citedSourcesFrom of its text; a structured output, of its
   * JSON text), and `[]` when it cites none, which drops every item of the
   * results a policy `citations` rule names from this run's replay. A run
   * that ends without the model's answer (stopped for approval, or ended
   * right after tools, e.g. `stop_on_first_tool`) leaves them out: a later
   * run's answer may cite those results; so does a view passed to
   * complete() without `finalOutput`. Default false: left out, so the
   * run's results are replayed whole.
   */
  citedSourcesFromAnswer?: boolean;
}

/** The failure of a streamed run that was cancelled before it completed (the SDK then reports no error). */
const CANCELLED = { code: 'aborted', message: 'the streamed run was cancelled before it completed' };

/** A RunState as the SDK's run() takes it to resume (told apart by shape: the host's copy of the SDK may not be this package's). */
function isRunState(value: unknown): value is AgentsRunState {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const state = value as Partial<AgentsRunState>;
  return Array.isArray(state._generatedItems) && Array.isArray(state._modelResponses) && typeof state.getInterruptions === 'function';
}

/** A StreamedRunResult: its run goes on after run() returns, until `completed` settles. */
function isStreamedResult(value: unknown): value is AgentsRunView & { completed: Promise<void>; state: AgentsRunState } {
  return (
    typeof value === 'object' && value !== null && 'completed' in value && typeof (value as { toStream?: unknown }).toStream === 'function'
  );
}

/**
 * Records one run of the OpenAI Agents SDK (`run(agent, input)`, or a
 * Runner's) from what the SDK keeps of it: each model response that asked
 * for function tools is a round, its calls in the response's order with the
 * outputs the model was sent; the calls that stopped the run for approval
 * (ToolApprovalRequested); then RunCompleted with the tokens of every model
 * call, or RunFailed. A run that resumes a RunState after approvals records
 * the answers (ToolApprovalDecided) and the approved calls' outputs, keyed by
 * the round and sequence of the run that asked.
 *
 * The events are published once run() returns (a streamed run's, once its
 * stream completes), or throws: one recorder per run, and a run that
 * resumes a state is a new run (its own runId).
 */
export class AgentsRunRecorder {
  /** The run being recorded. */
  readonly run: RunPublisher;
  /** Settles once the run's end is published; rejects with the first event that could not be. */
  readonly recorded: Promise<void>;
  private resumePoint: ResumePoint | undefined;
  private ended = false;
  private settle!: { resolve: () => void; reject: (error: unknown) => void };

  constructor(
    target: RunTarget,
    private readonly options: AgentsRunRecorderOptions = {},
  ) {
    this.run = runOfTarget(target, options.userMessageId);
    this.recorded = new Promise<void>((resolve, reject) => (this.settle = { resolve, reject }));
    // A caller that never looks at `recorded` must not get an unhandled rejection; one that does still sees it.
    this.recorded.catch(() => undefined);
  }

  /**
   * Call before `run(agent, state)` resumes `state` (record() does it for
   * you): what the state holds then belongs to the run that stopped, and
   * the calls waiting for approval are the ones this run answers.
   */
  resuming(state: AgentsRunState): this {
    this.resumePoint = resumePointOf(state);
    return this;
  }

  /**
   * Runs `call(input)` and records the run: `input` is what you pass to the
   * SDK's run() (a RunState to resume is noted first). Returns what `call`
   * returns. A streamed result is returned at once and recorded when its
   * stream completes (await `recorded`). When the call throws, RunFailed is
   * published and the error rethrown.
   */
  async record<I, R>(input: I, call: (input: I) => Promise<R>): Promise<R> {
    if (isRunState(input)) this.resuming(input);
    let result: R;
    try {
      result = await call(input);
    } catch (error) {
      await this.fail(error).catch(() => undefined);
      throw error;
    }
    if (isStreamedResult(result)) {
      const streamed = result;
      streamed.completed
        .then(
          () => this.complete(streamed),
          (error: unknown) => this.fail(error, streamed.state),
        )
        .catch(() => undefined);
      return result;
    }
    await this.complete(result as AgentsRunView);
    return result;
  }

  /**
   * Records the run's rounds and RunCompleted from its result (a RunResult,
   * or a StreamedRunResult whose stream completed; one that was cancelled,
   * its consumer having stopped or its signal aborted, is RunFailed
   * `aborted`). Once a run has ended, does nothing.
   */
  complete(result: AgentsRunView): Promise<void> {
    const { cancelled, state } = result as { cancelled?: unknown; state?: unknown };
    if (cancelled === true) return this.fail(CANCELLED, isRunState(state) ? state : undefined);
    return this.end(async () => {
      const record = this.recordOf(result);
      await this.publishSteps(record);
      const { assistantMessageId } = this.options;
      const answered = !record.awaitingApproval && !record.endedAfterTools;
      const answer = this.options.citedSourcesFromAnswer && answered ? finalOutputText(result) : undefined;
      await this.run.complete({
        assistantMessageId:
          typeof assistantMessageId === 'function'
            ? assistantMessageId(result, record)
            : (assistantMessageId ?? record.finalMessageId ?? record.lastResponseId ?? this.run.scope.runId),
        finishReason: this.options.finishReason ?? (record.awaitingApproval || record.endedAfterTools ? 'tool_limit' : 'stop'),
        ...(record.usage.length > 0 ? { usage: boundedUsage(record.usage) } : {}),
        ...(answer === undefined ? {} : { citedSources: citedSourcesFrom(answer) }),
      });
    });
  }

  /**
   * Records RunFailed for what run() threw, with the rounds and usage of the
   * run's state: `state`, else the state the SDK's error carries (its
   * MaxTurnsExceededError, a guardrail's, a timeout's). An error without one
   * (the model provider's) is recorded alone: a streamed run's state is
   * always at hand. Once a run has ended, does nothing.
   */
  fail(error: unknown, state?: AgentsRunState): Promise<void> {
    return this.end(async () => {
      const carried = state ?? (typeof error === 'object' && error !== null ? (error as { state?: unknown }).state : undefined);
      const record = isRunState(carried) ? this.recordOf(runViewOfState(carried)) : undefined;
      if (record !== undefined) await this.publishSteps(record);
      await this.run.fail({
        error: describeRunFailure(error),
        ...(record !== undefined && record.usage.length > 0 ? { usage: boundedUsage(record.usage) } : {}),
      });
    });
  }

  private recordOf(view: AgentsRunView): AgentsRunRecord {
    return agentsRunRecord(view, this.resumePoint, { isToolError: this.options.isToolError });
  }

  private async end(publish: () => Promise<void>): Promise<void> {
    if (this.ended) return this.recorded;
    this.ended = true;
    try {
      await publish();
      this.settle.resolve();
    } catch (error) {
      this.settle.reject(error);
      throw error;
    }
  }

  /** The answers and resumed outputs first, then each round: its calls, their outputs, its approval requests. */
  private async publishSteps(record: AgentsRunRecord): Promise<void> {
    for (const { roundIndex, sequenceIndex, toolCallId, approved, reason } of record.decisions) {
      await this.run.approvalDecided({
        roundIndex,
        sequenceIndex,
        toolCallId,
        approved,
        ...(reason === undefined ? {} : { reason }),
        ...(this.options.decidedBy === undefined ? {} : { decidedBy: this.options.decidedBy }),
      });
    }
    // The calls are another run's: the publisher learns their tools (for its per-tool result limit) only from here.
    if (record.resumedResults.length > 0) await this.run.toolResults(record.resumedResults);
    for (const round of record.rounds) {
      await this.run.toolCalls(round.calls);
      if (round.results.length > 0) await this.run.toolResults(round.results);
      for (const call of round.approvalRequests) {
        // The contract names an approval's call by its id (the SDK refuses a call without one).
        if (call.toolCallId === '') continue;
        const reason = this.options.approvalReason?.(call);
        await this.run.approvalRequested({
          roundIndex: call.roundIndex,
          sequenceIndex: call.sequenceIndex,
          toolCallId: call.toolCallId,
          ...(reason === undefined ? {} : { reason }),
        });
      }
    }
  }
}

/**
 * A recorder for one run of the OpenAI Agents SDK:
 * `recordAgentsRun({ publisher, scope }, { assistantMessageId })`, then
 * `recorder.record(input, (input) => run(agent, input))`.
 */
export function recordAgentsRun(target: RunTarget, options: AgentsRunRecorderOptions = {}): AgentsRunRecorder {
  return new AgentsRunRecorder(target, options);
}

/**
 * Runs `call(input)` (your `run(agent, input, options)`) and records it as
 * one run of `target`; see AgentsRunRecorder. For a streamed run, use a
 * recorder and await its `recorded`.
 */
export function recordedRun<I, R>(
  target: RunTarget,
  input: I,
  call: (input: I) => Promise<R>,
  options: AgentsRunRecorderOptions = {},
): Promise<R> {
  return new AgentsRunRecorder(target, options).record(input, call);
}
