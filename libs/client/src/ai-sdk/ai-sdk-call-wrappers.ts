import { generateText, stepCountIs, streamText } from 'ai';
import type { InferGenerateOutput, InferStreamOutput, OutputInterface, PrepareStepFunction, StopCondition, ToolSet } from 'ai';
import { type AiSdkRunTarget, type RecordingOptions, toolHistoryCallbacks } from './ai-sdk-run-recorder';

/*
 * The SDK's own types, for AI SDK 6 and 7 alike. Their type parameters differ
 * after the first (7 put RUNTIME_CONTEXT between TOOLS and OUTPUT), so only
 * TOOLS is given to the SDK's generics, and OUTPUT is put back where it shows:
 * the `output` option and the members of the result that carry the output.
 */

type OutputKey = 'output' | 'experimental_output';
type DefaultGenerateOutput = OutputInterface<string, string>;
type DefaultStreamOutput = OutputInterface<string, string, never>;

/** The options with `output` of type OUTPUT, by each member of the SDK's union of options (prompt or messages). */
type WithOutputOption<OPTIONS, OUTPUT> = OPTIONS extends unknown
  ? Omit<OPTIONS, OutputKey> & { [K in Extract<keyof OPTIONS, OutputKey>]?: OUTPUT }
  : never;

/** generateText's options. */
export type GenerateTextOptions<TOOLS extends ToolSet = ToolSet, OUTPUT extends OutputInterface = DefaultGenerateOutput> = WithOutputOption<
  Parameters<typeof generateText<TOOLS>>[0],
  OUTPUT
>;
/** streamText's options. */
export type StreamTextOptions<TOOLS extends ToolSet = ToolSet, OUTPUT extends OutputInterface = DefaultStreamOutput> = WithOutputOption<
  Parameters<typeof streamText<TOOLS>>[0],
  OUTPUT
>;

type SdkGenerateTextResult<TOOLS extends ToolSet> = Awaited<ReturnType<typeof generateText<TOOLS>>>;
type SdkStreamTextResult<TOOLS extends ToolSet> = ReturnType<typeof streamText<TOOLS>>;
type ElementOutput<OUTPUT> = OUTPUT extends OutputInterface<unknown, unknown, infer ELEMENT> ? ELEMENT : never;
type AsyncIterableStream<T> = AsyncIterable<T> & ReadableStream<T>;

/** generateText's result: the SDK's own type, its `output` of type OUTPUT. */
export type RecordedGenerateTextResult<TOOLS extends ToolSet = ToolSet, OUTPUT extends OutputInterface = DefaultGenerateOutput> = [
  OUTPUT,
] extends [DefaultGenerateOutput]
  ? SdkGenerateTextResult<TOOLS>
  : Omit<SdkGenerateTextResult<TOOLS>, OutputKey> & {
      readonly [K in Extract<keyof SdkGenerateTextResult<TOOLS>, OutputKey>]: InferGenerateOutput<OUTPUT>;
    };

interface StreamOutputMembers<OUTPUT extends OutputInterface> {
  readonly output: PromiseLike<InferGenerateOutput<OUTPUT>>;
  readonly partialOutputStream: AsyncIterableStream<InferStreamOutput<OUTPUT>>;
  readonly experimental_partialOutputStream: AsyncIterableStream<InferStreamOutput<OUTPUT>>;
  readonly elementStream: AsyncIterableStream<ElementOutput<OUTPUT>>;
}

/** streamText's result (the SDK's own type, its output members of type OUTPUT), and `recorded`. */
export type RecordedStreamTextResult<TOOLS extends ToolSet = ToolSet, OUTPUT extends OutputInterface = DefaultStreamOutput> = ([
  OUTPUT,
] extends [DefaultStreamOutput]
  ? SdkStreamTextResult<TOOLS>
  : Omit<SdkStreamTextResult<TOOLS>, keyof StreamOutputMembers<OUTPUT>> &
      Pick<StreamOutputMembers<OUTPUT>, Extract<keyof SdkStreamTextResult<TOOLS>, keyof StreamOutputMembers<OUTPUT>>>) & {
  /**
   * Resolves once the run's end (RunCompleted, or RunFailed for an error or
   * an abort) is acknowledged by the broker; rejects with the first event
   * that could not be published. Settles only once the stream is consumed.
   */
  readonly recorded: Promise<void>;
};

type Callback = (...args: never[]) => unknown;
type Recorder<TOOLS extends ToolSet> = ReturnType<typeof toolHistoryCallbacks<TOOLS>>;

/**
 * The callbacks AI SDK 7 renamed, by their AI SDK 6 name. 7 calls the new one
 * when it is given, else the old one: the caller's callback is taken by
 * either name, and ours goes under both, so that either SDK calls it once.
 */
const RENAMED = { onStepFinish: 'onStepEnd', onFinish: 'onEnd', experimental_onToolCallFinish: 'onToolExecutionEnd' } as const;

/** The caller's options with the recorder's callbacks first in every callback it records from. */
function withRecording<TOOLS extends ToolSet>(
  options: object,
  recorder: Recorder<TOOLS>,
  ours: Partial<Record<keyof typeof RENAMED, Callback>>,
): Record<string, unknown> {
  const theirs = options as Record<string, unknown> & { prepareStep?: PrepareStepFunction<TOOLS>; stopWhen?: unknown };
  const merged: Record<string, unknown> = {
    ...options,
    prepareStep: prepareSteps(recorder.prepareStep, theirs.prepareStep),
    stopWhen: [...stopConditions(theirs.stopWhen as StopCondition<TOOLS> | StopCondition<TOOLS>[] | undefined), recorder.recordingFailed],
  };
  for (const [name, renamed] of Object.entries(RENAMED) as Array<[keyof typeof RENAMED, string]>) {
    const own = ours[name];
    if (own === undefined) continue;
    const callback = chain(own, (theirs[renamed] ?? theirs[name]) as Callback | undefined);
    merged[name] = callback;
    merged[renamed] = callback;
  }
  return merged;
}

/**
 * generateText, recorded as one run: each step's round is acknowledged by
 * the broker before the next model call, then RunCompleted. Resolves only
 * once the run is recorded. If the call throws, RunFailed is recorded and
 * the error rethrown; if a step cannot be recorded, the loop makes no
 * further model call and the publisher's error is thrown. The callbacks
 * in `options` still run, after the recording ones.
 */
export async function recordedGenerateText<TOOLS extends ToolSet = ToolSet, OUTPUT extends OutputInterface = DefaultGenerateOutput>(
  target: AiSdkRunTarget,
  options: GenerateTextOptions<TOOLS, OUTPUT>,
  recording: RecordingOptions<TOOLS> = {},
): Promise<RecordedGenerateTextResult<TOOLS, OUTPUT>> {
  const recorder = toolHistoryCallbacks<TOOLS>(target, recording);
  let result: unknown;
  try {
    const merged = withRecording(options, recorder, {
      onStepFinish: recorder.onStepFinish,
      onFinish: recorder.onFinish,
      experimental_onToolCallFinish: recorder.experimental_onToolCallFinish,
    });
    result = await generateText(merged as Parameters<typeof generateText>[0]);
  } catch (error) {
    await recorder.fail(error);
    throw error;
  }
  await recorder.recorded;
  return result as RecordedGenerateTextResult<TOOLS, OUTPUT>;
}

/**
 * streamText, recorded as one run: each step's round is acknowledged by the
 * broker before the next model call, then RunCompleted when the stream
 * finishes, or RunFailed on an error or an abort. `recorded` on the result
 * says when that is done. The callbacks in `options` still run, after the
 * recording ones; without an `onError`, errors are logged as streamText does.
 * With `streamRetries` (AI SDK 7), an error the SDK may retry fails the run
 * only if the stream still ends in it; your `onError`'s answer (`{ retry:
 * true }`) goes back to the SDK.
 */
export function recordedStreamText<TOOLS extends ToolSet = ToolSet, OUTPUT extends OutputInterface = DefaultStreamOutput>(
  target: AiSdkRunTarget,
  options: StreamTextOptions<TOOLS, OUTPUT>,
  recording: RecordingOptions<TOOLS> = {},
): RecordedStreamTextResult<TOOLS, OUTPUT> {
  const recorder = toolHistoryCallbacks<TOOLS>(target, recording);
  const theirs = options as Record<string, unknown>;
  // AI SDK 7 retries a step that errs after streaming started when asked to (streamRetries): the error then ends no run.
  const mayRetry = theirs.streamRetries !== undefined;
  let streamError: { error: unknown } | undefined;
  const theirOnError = (theirs.onError as ((event: { error: unknown }) => unknown) | undefined) ?? (({ error }) => console.error(error));
  try {
    const merged = withRecording(options, recorder, {
      onStepFinish: recorder.onStepFinish,
      onFinish: async (event: Parameters<Recorder<TOOLS>['onFinish']>[0]) => {
        // A stream that ends in an error still finishes (finishReason 'error'): a retried error ends no run, one it ends in does.
        if (streamError !== undefined && event.finishReason === 'error') await recorder.onError(streamError);
        else await recorder.onFinish(event);
      },
      experimental_onToolCallFinish: recorder.experimental_onToolCallFinish,
    });
    merged.onError = async (event: { error: unknown }) => {
      if (mayRetry) streamError = event;
      else await recorder.onError(event);
      return theirOnError(event);
    };
    merged.onAbort = chain(recorder.onAbort, theirs.onAbort as Recorder<TOOLS>['onAbort'] | undefined);
    if (mayRetry) {
      // AI SDK 7: a step whose model call itself failed ends the stream without finishing it.
      merged.onStepError = chain(
        ({ error }: { error: unknown }) => recorder.onError({ error }),
        theirs.onStepError as ((event: { error: unknown }) => unknown) | undefined,
      );
    }
    const result = streamText(merged as Parameters<typeof streamText>[0]);
    return Object.assign(result, { recorded: recorder.recorded }) as unknown as RecordedStreamTextResult<TOOLS, OUTPUT>;
  } catch (error) {
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
  ours: (...args: A) => unknown,
  theirs: ((...args: A) => unknown) | undefined,
): (...args: A) => Promise<void> {
  return async (...args) => {
    await ours(...args);
    await theirs?.(...args);
  };
}
