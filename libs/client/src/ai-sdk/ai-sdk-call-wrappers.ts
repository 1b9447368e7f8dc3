import { generateText, stepCountIs, streamText } from 'ai';
import type { GenerateTextResult, OutputInterface, PrepareStepFunction, StopCondition, StreamTextResult, ToolSet } from 'ai';
import { type AiSdkRunTarget, type RecordingOptions, toolHistoryCallbacks } from './ai-sdk-run-recorder';

/** generateText's options. */
export type GenerateTextOptions<TOOLS extends ToolSet, OUTPUT extends OutputInterface> = Parameters<typeof generateText<TOOLS, OUTPUT>>[0];
/** streamText's options. */
export type StreamTextOptions<TOOLS extends ToolSet, OUTPUT extends OutputInterface> = Parameters<typeof streamText<TOOLS, OUTPUT>>[0];

export type RecordedStreamTextResult<TOOLS extends ToolSet, OUTPUT extends OutputInterface> = StreamTextResult<TOOLS, OUTPUT> & {
  /**
   * Resolves once the run's end (RunCompleted, or RunFailed for an error or
   * an abort) is acknowledged by the broker; rejects with the first event
   * that could not be published. Settles only once the stream is consumed.
   */
  readonly recorded: Promise<void>;
};

/**
 * generateText, recorded as one run: each step's round is acknowledged by
 * the broker before the next model call, then RunCompleted. Resolves only
 * once the run is recorded. If the call throws, RunFailed is recorded and
 * the error rethrown; if a step cannot be recorded, the loop makes no
 * further model call and the publisher's error is thrown. The callbacks
 * in `options` still run, after the recording ones.
 */
export async function recordedGenerateText<
  TOOLS extends ToolSet = ToolSet,
  OUTPUT extends OutputInterface = OutputInterface<string, string>,
>(
  target: AiSdkRunTarget,
  options: GenerateTextOptions<TOOLS, OUTPUT>,
  recording: RecordingOptions<TOOLS> = {},
): Promise<GenerateTextResult<TOOLS, OUTPUT>> {
  const recorder = toolHistoryCallbacks<TOOLS>(target, recording);
  let result: GenerateTextResult<TOOLS, OUTPUT>;
  try {
    result = await generateText<TOOLS, OUTPUT>({
      ...options,
      prepareStep: prepareSteps(recorder.prepareStep, options.prepareStep),
      stopWhen: [...stopConditions(options.stopWhen), recorder.recordingFailed],
      onStepFinish: chain(recorder.onStepFinish, options.onStepFinish),
      onFinish: chain(recorder.onFinish, options.onFinish),
      experimental_onToolCallFinish: chain(recorder.experimental_onToolCallFinish, options.experimental_onToolCallFinish),
    });
  } catch (error) {
    await recorder.fail(error);
    throw error;
  }
  await recorder.recorded;
  return result;
}

/**
 * streamText, recorded as one run: each step's round is acknowledged by the
 * broker before the next model call, then RunCompleted when the stream
 * finishes, or RunFailed on an error or an abort. `recorded` on the result
 * says when that is done. The callbacks in `options` still run, after the
 * recording ones; without an `onError`, errors are logged as streamText does.
 */
export function recordedStreamText<
  TOOLS extends ToolSet = ToolSet,
  OUTPUT extends OutputInterface = OutputInterface<string, string, never>,
>(
  target: AiSdkRunTarget,
  options: StreamTextOptions<TOOLS, OUTPUT>,
  recording: RecordingOptions<TOOLS> = {},
): RecordedStreamTextResult<TOOLS, OUTPUT> {
  const recorder = toolHistoryCallbacks<TOOLS>(target, recording);
  try {
    const result = streamText<TOOLS, OUTPUT>({
      ...options,
      prepareStep: prepareSteps(recorder.prepareStep, options.prepareStep),
      stopWhen: [...stopConditions(options.stopWhen), recorder.recordingFailed],
      onStepFinish: chain(recorder.onStepFinish, options.onStepFinish),
      onFinish: chain(recorder.onFinish, options.onFinish),
      onError: chain(recorder.onError, options.onError ?? (({ error }) => console.error(error))),
      onAbort: chain(recorder.onAbort, options.onAbort),
      experimental_onToolCallFinish: chain(recorder.experimental_onToolCallFinish, options.experimental_onToolCallFinish),
    });
    return Object.assign(result, { recorded: recorder.recorded });
  } catch (error) {
    // Invalid options throw before any step: the run still ends, as failed.
    void recorder.fail(error);
    throw error;
  }
}

/** The caller's stop conditions, or the SDK's default of one step. */
function stopConditions<TOOLS extends ToolSet>(
  stopWhen: StopCondition<TOOLS> | StopCondition<TOOLS>[] | undefined,
): StopCondition<TOOLS>[] {
  if (stopWhen === undefined) return [stepCountIs(1)];
  return Array.isArray(stopWhen) ? stopWhen : [stopWhen];
}

/** Ours first (it records what the call resumes, before the first model call), then the caller's, whose settings the step takes. */
function prepareSteps<TOOLS extends ToolSet>(
  ours: PrepareStepFunction<TOOLS>,
  theirs: PrepareStepFunction<TOOLS> | undefined,
): PrepareStepFunction<TOOLS> {
  return async (step) => {
    await ours(step);
    return theirs?.(step);
  };
}

/** Ours first, so a step is recorded before the caller sees it; theirs runs whatever ours did (ours never rejects). */
function chain<A extends unknown[]>(
  ours: (...args: A) => PromiseLike<void> | void,
  theirs: ((...args: A) => PromiseLike<void> | void) | undefined,
): (...args: A) => Promise<void> {
  return async (...args) => {
    await ours(...args);
    await theirs?.(...args);
  };
}
