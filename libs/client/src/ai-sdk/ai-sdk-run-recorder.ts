import type { OnFinishEvent, OnToolCallFinishEvent, StepResult, StopCondition, ToolSet } from 'ai';
import type { RunPublisher } from '../tool-event-publisher';
import { errorText, runFailure, runFinishReason, stepInvocations, stepUsage } from './ai-sdk-step-mapper';

/** How a call ended: the onFinish event of generateText or streamText, or generateText's (or an Agent's) result. */
export type FinishedCall<TOOLS extends ToolSet = ToolSet> = Pick<OnFinishEvent<TOOLS>, 'steps' | 'response' | 'text'>;

export interface RecordingOptions<TOOLS extends ToolSet = ToolSet> {
  /**
   * RunCompleted's `assistantMessageId`: the id of the host's final
   * assistant message of the run, or a function of the finished call.
   * Default: the final response's id.
   */
  assistantMessageId?: string | ((finished: FinishedCall<TOOLS>) => string);
}

/**
 * Callbacks that record one generateText/streamText call as one run. Pass
 * them to the call; none of them ever rejects (the SDK would swallow it):
 * a failure to record is reported by `recorded` and `recordingFailed`.
 */
export interface ToolHistoryCallbacks<TOOLS extends ToolSet = ToolSet> {
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
 * model's order (sequenceIndex) with the results the model was sent back;
 * then RunCompleted, or RunFailed. For calls you make yourself; the
 * recordedGenerateText and recordedStreamText wrappers wire it for you.
 */
export function toolHistoryCallbacks<TOOLS extends ToolSet = ToolSet>(
  run: RunPublisher,
  options: RecordingOptions<TOOLS> = {},
): ToolHistoryCallbacks<TOOLS> {
  let nextRoundIndex = 0;
  let ended = false;
  let failure: { error: unknown } | undefined;
  // One publication at a time, in callback order: streamText calls onAbort without waiting for a step in flight.
  let tail: Promise<void> = Promise.resolve();
  const executions = new Map<string, { startedAt: Date; finishedAt: Date }>();
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

  const recordStep = async (step: StepResult<TOOLS>): Promise<void> => {
    if (ended || failure !== undefined) return;
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
      invocations.flatMap(({ sequenceIndex, toolCallId, result }) =>
        result === undefined
          ? []
          : [
              {
                roundIndex,
                sequenceIndex,
                toolCallId,
                result: result.value,
                isError: result.isError,
                occurredAt: executions.get(toolCallId)?.finishedAt ?? stepEnd,
              },
            ],
      ),
    );
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
        else await run.fail({ error: { code: RECORDING_FAILED, message: `a step could not be recorded: ${errorText(earlier.error)}` } });
      } catch (error) {
        // Best effort when a step already failed: the broker is likely still away, and the first failure says why.
        if (earlier === undefined) throw error;
      }
    }).then(() => (failure === undefined ? settle.resolve() : settle.reject(failure.error)));
  };

  const complete = (finished: FinishedCall<TOOLS>): Promise<void> =>
    end(() => {
      const { assistantMessageId = finished.response.id } = options;
      return run.complete({
        assistantMessageId: typeof assistantMessageId === 'function' ? assistantMessageId(finished) : assistantMessageId,
        finishReason: runFinishReason(finished.steps),
        usage: stepUsage(finished.steps),
      });
    });

  return {
    onStepFinish: (step) => enqueue(() => recordStep(step)),
    onFinish: complete,
    complete,
    onError: ({ error }) => end(() => run.fail({ error: runFailure(error) })),
    onAbort: () => end(() => run.fail({ error: { code: 'aborted', message: 'the call was aborted' } })),
    experimental_onToolCallFinish: (event) => {
      const finishedAt = new Date();
      executions.set(event.toolCall.toolCallId, { startedAt: new Date(finishedAt.getTime() - event.durationMs), finishedAt });
    },
    recordingFailed: () => failure !== undefined,
    fail: (error) => end(() => run.fail({ error: runFailure(error) })),
    recorded,
  };
}
