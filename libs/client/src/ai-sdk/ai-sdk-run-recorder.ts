import type { OnFinishEvent, OnToolCallFinishEvent, PrepareStepFunction, StepResult, StopCondition, ToolSet, UIMessage } from 'ai';
import { runOfTarget } from '../run-target';
import type { RunPublisher } from '../run-publisher';
import { splitResumedStep } from './ai-sdk-approvals';
import type { AiSdkRunTarget, FinishedCall, RecordingOptions } from './ai-sdk-recording-options';
import { AiSdkStepRecorder } from './ai-sdk-step-recorder';

export type { AiSdkRunTarget, ApprovalRequestCall, FinishedCall, RecordingOptions } from './ai-sdk-recording-options';

/**
 * Callbacks that record one generateText/streamText call as one run. Pass
 * them to the call; none of them ever rejects (the SDK would swallow it):
 * a failure to record is reported by `recorded` and `recordingFailed`.
 */
export interface ToolHistoryCallbacks<TOOLS extends ToolSet = ToolSet> {
  /** The run being recorded. */
  readonly run: RunPublisher;
  /**
   * At the first step, before the first model call: records the person's
   * answers to approval requests that the input messages carry
   * (ToolApprovalDecided, in this run, keyed by the call of the run that
   * asked) and what the SDK sent the model for each approved call (its
   * result). Returns nothing, so the call's settings stand.
   */
  prepareStep: PrepareStepFunction<TOOLS>;
  /** Records the step's round, if it asked for tools, and resolves once the broker has it: before the next model call. */
  onStepFinish: (step: StepResult<TOOLS>) => Promise<void>;
  /** Records RunCompleted. */
  onFinish: (event: OnFinishEvent<TOOLS>) => Promise<void>;
  /** Records RunCompleted from a result, for a call that takes no onFinish (an Agent's generate). Once a run has ended, does nothing. */
  complete(finished: FinishedCall<TOOLS>): Promise<void>;
  /** streamText's: records RunFailed. */
  onError: (event: { error: unknown }) => Promise<void>;
  /** streamText's: records RunFailed with code `aborted`. */
  onAbort: (event: { steps: StepResult<TOOLS>[] }) => Promise<void>;
  /** Times each tool's execution, so the recorded call and result carry when it ran (optional: without it, both carry the step's end). */
  experimental_onToolCallFinish: (event: OnToolCallFinishEvent<TOOLS>) => void;
  /** A stop condition for `stopWhen`: true once a step could not be recorded, so the loop makes no further model call. */
  recordingFailed: StopCondition<TOOLS>;
  /** Records RunFailed for an error the call threw (generateText has no onError). Once a run has ended, does nothing. */
  fail(error: unknown): Promise<void>;
  /**
   * Resolves once the run's end (RunCompleted or RunFailed) is acknowledged;
   * rejects with the first event that could not be published.
   */
  readonly recorded: Promise<void>;
}

/**
 * Records one AI SDK call as one run of `run`: each step that asked for
 * tools is a round (roundIndex counts those steps from 0), its calls in the
 * model's order (sequenceIndex) with the results the model was sent back,
 * and for a call that needs approval, ToolApprovalRequested; then
 * RunCompleted, or RunFailed. A call that resumes after approval answers
 * records them and the resumed calls' results first, keyed by the calls of
 * the run that asked (prepareStep). For calls you make yourself; the
 * recordedGenerateText and recordedStreamText wrappers wire it for you.
 */
export function toolHistoryCallbacks<TOOLS extends ToolSet = ToolSet>(
  target: AiSdkRunTarget,
  options: RecordingOptions<TOOLS> = {},
): ToolHistoryCallbacks<TOOLS> {
  const run = runOfTarget(target, options.userMessageId ?? lastUserMessageId(options.uiMessages));
  const recorder = new AiSdkStepRecorder<TOOLS>(run, options);
  const { recording } = recorder;
  // None of the callbacks ever rejects (the SDK would swallow it): `recorded` and `recordingFailed` say what failed.
  const quietly = (published: Promise<unknown>): Promise<void> => published.then(noop, noop);
  return {
    run,
    prepareStep: async ({ stepNumber, messages }) => {
      if (stepNumber !== 0) return undefined;
      const { input, executed } = splitResumedStep(messages);
      await quietly(recorder.resume(input, executed));
      return undefined;
    },
    onStepFinish: (step) => quietly(recorder.step(step)),
    onFinish: (event) => quietly(recorder.complete(event)),
    complete: (finished) => quietly(recorder.complete(finished)),
    onError: ({ error }) => quietly(recorder.fail(error)),
    onAbort: () => quietly(recorder.abort()),
    experimental_onToolCallFinish: (event) => recorder.toolCallFinished(event),
    recordingFailed: () => recording.failed,
    fail: (error) => quietly(recorder.fail(error)),
    recorded: recording.recorded,
  };
}

const noop = (): void => undefined;

/** The id of the last user message among the host's UI messages. */
export function lastUserMessageId(uiMessages: ReadonlyArray<Pick<UIMessage, 'id' | 'role'>> | undefined): string | undefined {
  for (let i = (uiMessages?.length ?? 0) - 1; i >= 0; i--) {
    const { role, id } = uiMessages![i];
    if (role === 'user') return typeof id === 'string' && id !== '' ? id : undefined;
  }
  return undefined;
}
