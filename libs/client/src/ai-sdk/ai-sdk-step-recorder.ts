import type { ModelMessage, OnToolCallFinishEvent, StepResult, ToolSet } from 'ai';
import type { RecordedCall, RecordedResult } from '../recording/recorded-run';
import { RunRecording } from '../recording/run-recording';
import type { Timed } from '../recording/recording-steps';
import type { RunPublisher } from '../run-publisher';
import { type ApprovalAnswer, approvalAnswers, resumedResults } from './ai-sdk-approvals';
import type { FinishedCall, RecordingOptions } from './ai-sdk-recording-options';
import { runFailure, runFinishReason, type StepInvocation, stepInvocations, stepReasoning, stepUsage } from './ai-sdk-step-mapper';

/** When each tool ran, by call id (the SDK reports it as it finishes). */
interface Execution {
  startedAt: Date;
  finishedAt: Date;
}

/**
 * Maps one AI SDK call's callbacks onto a RunRecording: each step that
 * asked for tools is a round, the approval answers the call resumes with
 * are decisions on the calls of the run that asked. The recording skips
 * the rest once a step could not be published, and then ends the run as
 * failed (`recording_failed`).
 */
export class AiSdkStepRecorder<TOOLS extends ToolSet> {
  readonly recording: RunRecording;
  private resumeRecorded = false;
  // Answers whose calls' results are known only once the call returns (an Agent's generate, AI SDK 7).
  private answersAwaitingResults: ApprovalAnswer[] | undefined;
  private readonly executions = new Map<string, Execution>();

  constructor(
    run: RunPublisher,
    private readonly options: RecordingOptions<TOOLS>,
  ) {
    this.recording = new RunRecording(run, {
      afterFailedStep: 'end-as-failed',
      decidedBy: options.decidedBy,
      citedSourcesFromAnswer: options.citedSourcesFromAnswer,
    });
  }

  /**
   * The answers `input` carries, then the resumed calls' outcomes in
   * `executed`, once per call of the SDK; `later` when the outcomes are not
   * known yet (they are recorded when the run completes).
   */
  resume(input: readonly ModelMessage[], executed: ModelMessage | undefined | 'later'): Promise<unknown> {
    if (this.resumeRecorded || this.recording.ended || this.recording.failed) return Promise.resolve();
    this.resumeRecorded = true;
    const answers = approvalAnswers(input, this.options.pendingApprovals);
    if (answers.length === 0) return Promise.resolve();
    const now = new Date();
    const published: Array<Promise<unknown> | undefined> = answers.map((answer) =>
      this.recording.publishDecision({ ...answer, occurredAt: now }),
    );
    if (executed === 'later') this.answersAwaitingResults = answers;
    else published.push(this.resumedResults(answers, executed, now));
    return Promise.all(published);
  }

  /** A finished step: its tokens, and its round (calls, results, approval requests) when it asked for tools. */
  step(step: StepResult<TOOLS>): Promise<unknown> {
    const invocations = stepInvocations(step);
    const reasoning = invocations.length === 0 ? undefined : stepReasoning(step);
    const round = this.recording.response({
      calls: invocations,
      usage: stepUsage([step])[0],
      ...(step.text === '' ? {} : { text: step.text }),
      ...(reasoning === undefined ? {} : { reasoning }),
    });
    const published: Array<Promise<unknown> | undefined> = [];
    if (step.stepNumber === 0 && this.options.messages !== undefined) {
      // Without prepareStep (an Agent's generate): AI SDK 6 begins the first step's messages with the SDK's tool message for the
      // resumed calls; 7 keeps it for the call's responseMessages only, so their results are recorded when the run completes.
      const first = step.response.messages[0];
      published.push(this.resume(this.options.messages, first?.role === 'tool' ? first : 'later'));
    }
    if (round !== undefined) published.push(...this.round(round.calls, invocations));
    return Promise.all(published);
  }

  /** RunCompleted from how the call finished (with the resumed calls' results first, when they were known only then). */
  complete(finished: FinishedCall<TOOLS>): Promise<unknown> {
    return this.recording.complete(async (steps) => {
      if (this.answersAwaitingResults !== undefined) {
        // AI SDK 7's responseMessages of the call begin with the tool message of the resumed calls.
        const { responseMessages } = finished as { responseMessages?: readonly ModelMessage[] };
        const results = this.resumedResultsOf(this.answersAwaitingResults, responseMessages?.[0], new Date());
        if (results.length > 0) await steps.results(results);
      }
      const { assistantMessageId = finished.response.id } = this.options;
      const finishReason = runFinishReason(finished.steps);
      return {
        assistantMessageId: typeof assistantMessageId === 'function' ? assistantMessageId(finished) : assistantMessageId,
        finishReason,
        endedAfterTools: finishReason !== 'stop',
        usage: stepUsage(finished.steps),
        answerText: finished.text,
      };
    });
  }

  /** RunFailed for what the call threw, with the tokens of the model calls so far. */
  fail(error: unknown): Promise<unknown> {
    return this.recording.fail({ error: runFailure(error) });
  }

  /** RunFailed `aborted`. */
  abort(): Promise<unknown> {
    return this.recording.fail({ error: { code: 'aborted', message: 'the call was aborted' } });
  }

  /** When the tool ran, so the recorded call and result carry it. */
  toolCallFinished(event: OnToolCallFinishEvent<TOOLS>): void {
    const finishedAt = new Date();
    const took = executionMs(event);
    this.executions.set(event.toolCall.toolCallId, { startedAt: new Date(finishedAt.getTime() - took), finishedAt });
  }

  /** The round's calls, then its results (two acknowledgements a step, however many calls), then its approval requests. */
  private round(calls: readonly RecordedCall[], invocations: readonly StepInvocation[]): Array<Promise<unknown> | undefined> {
    const stepEnd = new Date();
    const started = (call: RecordedCall) => this.executions.get(call.toolCallId)?.startedAt ?? stepEnd;
    const finished = (call: RecordedCall) => this.executions.get(call.toolCallId)?.finishedAt ?? stepEnd;
    const published: Array<Promise<unknown> | undefined> = [
      this.recording.publishCalls(calls.map((call) => ({ ...call, occurredAt: started(call) }))),
      this.recording.publishResults(
        calls.flatMap((call, at) => {
          const { result } = invocations[at];
          return result === undefined ? [] : [{ ...call, result: result.value, isError: result.isError, occurredAt: finished(call) }];
        }),
      ),
    ];
    // The contract names an approval's call by its id: a call the model gave none cannot wait for one (the SDK always gives one).
    calls.forEach((call, at) => {
      if (invocations[at].approvalId === undefined) return;
      const reason = this.options.approvalReason?.({ toolCallId: call.toolCallId, toolName: call.toolName, input: call.arguments });
      published.push(this.recording.publishApprovalRequest({ ...call, occurredAt: stepEnd }, reason));
    });
    for (const call of calls) this.executions.delete(call.toolCallId);
    return published;
  }

  /** What the SDK sent the model for the approved calls (the tool message it added before the first model call). */
  private resumedResults(answers: readonly ApprovalAnswer[], executed: ModelMessage | undefined, now: Date): Promise<unknown> {
    const results = this.resumedResultsOf(answers, executed, now);
    return results.length === 0 ? Promise.resolve() : this.recording.publishResults(results);
  }

  private resumedResultsOf(
    answers: readonly ApprovalAnswer[],
    executed: ModelMessage | undefined,
    now: Date,
  ): Array<Timed<RecordedResult>> {
    return resumedResults(answers, executed?.role === 'tool' ? executed : undefined).map(({ result, ...call }) => {
      const finishedAt = this.executions.get(call.toolCallId)?.finishedAt ?? now;
      this.executions.delete(call.toolCallId);
      return { ...call, result: result.value, isError: result.isError, occurredAt: finishedAt };
    });
  }
}

/** How long the tool ran: AI SDK 6 says it in `durationMs`, 7 in `toolExecutionMs`; 0 when neither is a duration. */
function executionMs(event: object): number {
  const { durationMs, toolExecutionMs } = event as { durationMs?: unknown; toolExecutionMs?: unknown };
  const took = typeof toolExecutionMs === 'number' ? toolExecutionMs : durationMs;
  return typeof took === 'number' && Number.isFinite(took) && took > 0 ? took : 0;
}
