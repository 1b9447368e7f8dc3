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
import { citedSourcesFrom } from '../cited-sources';
import { type RunTarget, runOfTarget } from '../run-target';
import type { RunPublisher } from '../tool-event-publisher';
import { type ApprovalAnswer, approvalAnswers, type KnownPendingApproval, resumedResults, splitResumedStep } from './ai-sdk-approvals';
import { errorText, runFailure, runFinishReason, stepInvocations, stepUsage } from './ai-sdk-step-mapper';

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

/** The RunFailed code of a run whose steps could not all be recorded. */
const RECORDING_FAILED = 'recording_failed';

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
  let nextRoundIndex = 0;
  let resumeRecorded = false;
  // Answers whose calls' results are known only once the call returns (an Agent's generate, AI SDK 7).
  let answersAwaitingResults: ApprovalAnswer[] | undefined;
  let ended = false;
  let failure: { error: unknown } | undefined;
  // One publication at a time, in callback order: streamText calls onAbort without waiting for a step in flight.
  let tail: Promise<void> = Promise.resolve();
  const executions = new Map<string, { startedAt: Date; finishedAt: Date }>();
  // Every model call so far: a failed run reports their tokens too.
  const finishedSteps: StepResult<TOOLS>[] = [];
  let settle!: { resolve: () => void; reject: (error: unknown) => void };
  const recorded = new Promise<void>((resolve, reject) => (settle = { resolve, reject }));
  // A caller that never looks at `recorded` must not get an unhandled rejection; one that does still sees it.
  recorded.catch(() => undefined);

  const enqueue = (task: () => Promise<void>): Promise<void> => {
    tail = tail.then(task).catch((error: unknown) => {
      failure ??= { error };
    });
    return tail;
  };

  /**
   * The answers `input` carries and the resumed calls' outcomes in
   * `executed`, once per call of the SDK; `later` when the outcomes are not
   * known yet (they are recorded when the run completes).
   */
  const recordResume = async (input: readonly ModelMessage[], executed: ModelMessage | undefined | 'later'): Promise<void> => {
    if (resumeRecorded || ended || failure !== undefined) return;
    resumeRecorded = true;
    const answers = approvalAnswers(input, options.pendingApprovals);
    if (answers.length === 0) return;
    const now = new Date();
    for (const { toolCallId, roundIndex, sequenceIndex, approved, reason } of answers) {
      await run.approvalDecided({
        toolCallId,
        roundIndex,
        sequenceIndex,
        approved,
        ...(reason === undefined ? {} : { reason }),
        ...(options.decidedBy === undefined ? {} : { decidedBy: options.decidedBy }),
        occurredAt: now,
      });
    }
    if (executed === 'later') answersAwaitingResults = answers;
    else await recordResumedResults(answers, executed, now);
  };

  /** What the SDK sent the model for the approved calls (the tool message it added before the first model call). */
  const recordResumedResults = async (answers: ApprovalAnswer[], executed: ModelMessage | undefined, now = new Date()): Promise<void> => {
    const results = resumedResults(answers, executed?.role === 'tool' ? executed : undefined);
    if (results.length === 0) return;
    await run.toolResults(
      results.map(({ toolCallId, toolName, roundIndex, sequenceIndex, result }) => ({
        roundIndex,
        sequenceIndex,
        toolCallId,
        // The call is another run's: the publisher learns the tool (for its per-tool result limit) only from here.
        toolName,
        result: result.value,
        isError: result.isError,
        occurredAt: executions.get(toolCallId)?.finishedAt ?? now,
      })),
    );
    for (const { toolCallId } of results) executions.delete(toolCallId);
  };

  const recordStep = async (step: StepResult<TOOLS>): Promise<void> => {
    if (ended || failure !== undefined) return;
    if (step.stepNumber === 0 && options.messages !== undefined) {
      // Without prepareStep (an Agent's generate): AI SDK 6 begins the first step's messages with the SDK's tool message for the
      // resumed calls; 7 keeps it for the call's responseMessages only, so their results are recorded when the run completes.
      const first = step.response.messages[0];
      await recordResume(options.messages, first?.role === 'tool' ? first : 'later');
    }
    const invocations = stepInvocations(step);
    if (invocations.length === 0) return;
    const roundIndex = nextRoundIndex++;
    const stepEnd = new Date();
    // The round's calls, then its results: two acknowledgements per step, however many calls it made.
    await run.toolCalls(
      invocations.map(({ sequenceIndex, toolCallId, toolName, arguments: args }) => ({
        roundIndex,
        sequenceIndex,
        toolCallId,
        toolName,
        arguments: args,
        occurredAt: executions.get(toolCallId)?.startedAt ?? stepEnd,
      })),
    );
    await run.toolResults(
      invocations.flatMap(({ sequenceIndex, toolCallId, toolName, result }) =>
        result === undefined
          ? []
          : [
              {
                roundIndex,
                sequenceIndex,
                toolCallId,
                toolName,
                result: result.value,
                isError: result.isError,
                occurredAt: executions.get(toolCallId)?.finishedAt ?? stepEnd,
              },
            ],
      ),
    );
    // The contract names an approval's call by its id: a call the model gave none cannot wait for one (the SDK always gives one).
    for (const { sequenceIndex, toolCallId, toolName, arguments: input, approvalId } of invocations) {
      if (approvalId === undefined || toolCallId === '') continue;
      const reason = options.approvalReason?.({ toolCallId, toolName, input });
      await run.approvalRequested({
        roundIndex,
        sequenceIndex,
        toolCallId,
        ...(reason === undefined ? {} : { reason }),
        occurredAt: stepEnd,
      });
    }
    for (const { toolCallId } of invocations) executions.delete(toolCallId);
  };

  /** The run's end, once: its terminal event, or RunFailed when an earlier step could not be recorded. */
  const end = (publish: () => Promise<unknown>): Promise<void> => {
    if (ended) return tail;
    ended = true;
    return enqueue(async () => {
      const earlier = failure;
      try {
        if (earlier === undefined) await publish();
        else
          await run.fail({
            error: { code: RECORDING_FAILED, message: `a step could not be recorded: ${errorText(earlier.error)}` },
            ...usageSoFar(),
          });
      } catch (error) {
        // Best effort when a step already failed: the broker is likely still away, and the first failure says why.
        if (earlier === undefined) throw error;
      }
    }).then(() => (failure === undefined ? settle.resolve() : settle.reject(failure.error)));
  };

  const usageSoFar = () => (finishedSteps.length === 0 ? {} : { usage: stepUsage(finishedSteps) });

  const complete = (finished: FinishedCall<TOOLS>): Promise<void> =>
    end(async () => {
      if (answersAwaitingResults !== undefined) {
        // AI SDK 7's responseMessages of the call begin with the tool message of the resumed calls.
        const { responseMessages } = finished as { responseMessages?: readonly ModelMessage[] };
        await recordResumedResults(answersAwaitingResults, responseMessages?.[0]);
      }
      const { assistantMessageId = finished.response.id } = options;
      const finishReason = runFinishReason(finished.steps);
      return run.complete({
        assistantMessageId: typeof assistantMessageId === 'function' ? assistantMessageId(finished) : assistantMessageId,
        finishReason,
        usage: stepUsage(finished.steps),
        ...(options.citedSourcesFromAnswer && finishReason === 'stop' ? { citedSources: citedSourcesFrom(finished.text) } : {}),
      });
    });

  return {
    run,
    prepareStep: async ({ stepNumber, messages }) => {
      if (stepNumber !== 0) return undefined;
      const { input, executed } = splitResumedStep(messages);
      await enqueue(() => recordResume(input, executed));
      return undefined;
    },
    onStepFinish: (step) => {
      finishedSteps.push(step);
      return enqueue(() => recordStep(step));
    },
    onFinish: complete,
    complete,
    onError: ({ error }) => end(() => run.fail({ error: runFailure(error), ...usageSoFar() })),
    onAbort: () => end(() => run.fail({ error: { code: 'aborted', message: 'the call was aborted' }, ...usageSoFar() })),
    experimental_onToolCallFinish: (event) => {
      const finishedAt = new Date();
      const took = executionMs(event);
      executions.set(event.toolCall.toolCallId, { startedAt: new Date(finishedAt.getTime() - took), finishedAt });
    },
    recordingFailed: () => failure !== undefined,
    fail: (error) => end(() => run.fail({ error: runFailure(error), ...usageSoFar() })),
    recorded,
  };
}

/** How long the tool ran: AI SDK 6 says it in `durationMs`, 7 in `toolExecutionMs`; 0 when neither is a duration. */
function executionMs(event: object): number {
  const { durationMs, toolExecutionMs } = event as { durationMs?: unknown; toolExecutionMs?: unknown };
  const took = typeof toolExecutionMs === 'number' ? toolExecutionMs : durationMs;
  return typeof took === 'number' && Number.isFinite(took) && took > 0 ? took : 0;
}

/** The id of the last user message among the host's UI messages. */
export function lastUserMessageId(uiMessages: ReadonlyArray<Pick<UIMessage, 'id' | 'role'>> | undefined): string | undefined {
  for (let i = (uiMessages?.length ?? 0) - 1; i >= 0; i--) {
    const { role, id } = uiMessages![i];
    if (role === 'user') return typeof id === 'string' && id !== '' ? id : undefined;
  }
  return undefined;
}
