import type {
  ModelMessage,
  OnFinishEvent,
  OnToolCallFinishEvent,
  PrepareStepFunction,
  StepResult,
  StopCondition,
  ToolSet,
  UIMessage,
} from 'ai';
import { type RunTarget, runOfTarget } from '../run-target';
import type { RunPublisher } from '../tool-event-publisher';
import { type KnownPendingApproval, splitResumedStep } from './ai-sdk-approvals';
import { AiSdkStepRecorder } from './ai-sdk-step-recorder';

/** How a call ended: the onFinish event of generateText or streamText, or generateText's (or an Agent's) result. */
export type FinishedCall<TOOLS extends ToolSet = ToolSet> = Pick<OnFinishEvent<TOOLS>, 'steps' | 'response' | 'text'>;

/** Where a call is recorded: one run's publisher, or a publisher and the run's scope (then `userMessageId` can be added to it). */
export type AiSdkRunTarget = RunTarget;

/** A tool call that needs approval, as `approvalReason` gets it. */
export interface ApprovalRequestCall {
  toolCallId: string;
  toolName: string;
  input: unknown;
}

export interface RecordingOptions<TOOLS extends ToolSet = ToolSet> {
  /**
   * RunCompleted's `assistantMessageId`: the id of the host's final
   * assistant message of the run, or a function of the finished call.
   * Default: the final response's id.
   */
  assistantMessageId?: string | ((finished: FinishedCall<TOOLS>) => string);
  /**
   * The host's id of the message that started the run (every event carries
   * it; replay places a run without a final answer after it). Default: the
   * id of the last user message of `uiMessages`. Needs a `{ publisher,
   * scope }` target, or a RunPublisher whose scope already has it.
   */
  userMessageId?: string;
  /** The host's UI messages the call's `messages` were converted from (convertToModelMessages): their last user message's id is the default `userMessageId`. */
  uiMessages?: ReadonlyArray<Pick<UIMessage, 'id' | 'role'>>;
  /** Why a call needs approval, as shown to the person (ToolApprovalRequested's reason); default none, as the SDK gives none. */
  approvalReason?: (call: ApprovalRequestCall) => string | undefined;
  /**
   * The replay's calls awaiting approval (getReplayHistory's
   * `pendingApprovals`): where an answered call sat in the run that asked,
   * when its approval request is the SDK's own (see approvalAnswers).
   */
  pendingApprovals?: readonly KnownPendingApproval[];
  /** Who answered the approvals this call resumes, as the host names them (ToolApprovalDecided's decidedBy). */
  decidedBy?: string;
  /**
   * The call's input messages, for a call that is not given the recorder's
   * `prepareStep` (an Agent's generate): the approval answers among them are
   * then recorded when the first step finishes. The wrappers pass
   * `prepareStep`, which sees the messages itself.
   */
  messages?: readonly ModelMessage[];
  /**
   * true: RunCompleted's `citedSources` are the `[sourceN]` the answer
   * cites (citedSourcesFrom of the call's final `text`; with structured
   * `output`, the JSON text the model wrote), and `[]` when it cites none,
   * which drops every item of the results a policy `citations` rule names
   * from this run's replay. A run that ends without an answer (its last
   * step asked for tools, or for an approval) leaves them out: a later
   * run's answer may cite those results. Default false: left out, so the
   * run's results are replayed whole.
   */
  citedSourcesFromAnswer?: boolean;
}

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
