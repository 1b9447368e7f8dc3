import { describeRunFailure } from '../openai/openai-completion-mapper';
import { abortedFailure } from '../recording/contract-fit';
import { RunRecording } from '../recording/run-recording';
import { type RunTarget, runOfTarget } from '../run-target';
import type { RunPublisher } from '../run-publisher';
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
   * The model recorded with a round's reasoning items and `fc_` ids when its
   * response does not name one (a Responses model's raw response does).
   */
  model?: string;
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
const CANCELLED = abortedFailure('the streamed run was cancelled before it completed');

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
  private readonly recording: RunRecording;
  private resumePoint: ResumePoint | undefined;

  constructor(
    target: RunTarget,
    private readonly options: AgentsRunRecorderOptions = {},
  ) {
    this.run = runOfTarget(target, options.userMessageId);
    this.recording = new RunRecording(this.run, {
      decidedBy: options.decidedBy,
      approvalReason: options.approvalReason,
      citedSourcesFromAnswer: options.citedSourcesFromAnswer,
      finishReason: options.finishReason,
    });
    this.recorded = this.recording.recorded;
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
  async complete(result: AgentsRunView): Promise<void> {
    const { cancelled, state } = result as { cancelled?: unknown; state?: unknown };
    if (cancelled === true) return this.fail(CANCELLED, isRunState(state) ? state : undefined);
    await this.recording.complete(async (steps) => {
      const record = this.recordOf(result);
      this.recording.noteRecord(record);
      await steps.record(record);
      const { assistantMessageId } = this.options;
      return {
        assistantMessageId:
          typeof assistantMessageId === 'function'
            ? assistantMessageId(result, record)
            : (assistantMessageId ?? record.finalMessageId ?? record.lastResponseId ?? this.run.scope.runId),
        usage: record.usage,
        answerText: () => finalOutputText(result),
      };
    });
  }

  /**
   * Records RunFailed for what run() threw, with the rounds and usage of the
   * run's state: `state`, else the state the SDK's error carries (its
   * MaxTurnsExceededError, a guardrail's, a timeout's). An error without one
   * (the model provider's) is recorded alone: a streamed run's state is
   * always at hand. Once a run has ended, does nothing.
   */
  async fail(error: unknown, state?: AgentsRunState): Promise<void> {
    await this.recording.fail(async (steps) => {
      const carried = state ?? (typeof error === 'object' && error !== null ? (error as { state?: unknown }).state : undefined);
      const record = isRunState(carried) ? this.recordOf(runViewOfState(carried)) : undefined;
      if (record !== undefined) await steps.record(record);
      return { error: describeRunFailure(error), usage: record?.usage ?? null };
    });
  }

  private recordOf(view: AgentsRunView): AgentsRunRecord {
    return agentsRunRecord(view, this.resumePoint, { isToolError: this.options.isToolError, model: this.options.model });
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
