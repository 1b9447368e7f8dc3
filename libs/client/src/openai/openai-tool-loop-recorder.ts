import type { ChatCompletion, ChatCompletionToolMessageParam } from 'openai/resources/chat/completions';
import type { ResponseInputItem } from 'openai/resources/responses/responses';
import type { RecordedCall, RecordedRound } from '../recording/recorded-run';
import { resultOf } from '../recording/recorded-run';
import { RunRecording } from '../recording/run-recording';
import { type RunTarget, runOfTarget } from '../run-target';
import type { PublishedEvent, RunPublisher } from '../run-publisher';
import type { TokenUsage } from '../tool-event-types';
import {
  answerTextOf,
  assistantMessageOf,
  describeRunFailure,
  finishReasonOf,
  isChatCompletion,
  type OpenAiAssistantMessage,
  type OpenAiRecordedToolCall,
  type OpenAiToolOutput,
  toolCallsOf,
  toolMessageContent,
  toolResultOf,
  usageOf,
} from './openai-completion-mapper';
import {
  functionCallOutputItem,
  isOpenAiResponse,
  type OpenAiResponse,
  responseFinishReasonOf,
  responseRoundOf,
  responseTextOf,
  responseUsageOf,
} from './openai-responses-mapper';

/** One assistant message's tool calls, recorded as one round: the round's index, and its calls in `tool_calls` order, arguments parsed (ready to execute). */
export type OpenAiRecordedRound = Pick<RecordedRound, 'roundIndex'> & { calls: OpenAiRecordedToolCall[] };

export interface OpenAiToolOutputOptions {
  /** The tool failed and `output` describes the failure. Default false. */
  isError?: boolean;
}

export interface OpenAiToolLoopOptions {
  /**
   * The host's id of the user message that started the run: every event
   * carries it, and replay places a run without a final answer after it.
   * Needs a `{ publisher, scope }` target (a RunPublisher's scope is fixed:
   * give it to publisher.run() there).
   */
  userMessageId?: string;
  /**
   * true: finish() records RunCompleted's `citedSources`, the `[sourceN]`
   * the last message's text cites (citedSourcesFrom; with a JSON
   * `response_format`, its JSON text), and `[]` when it cites none, which
   * drops every item of the results a policy `citations` rule names from
   * this run's replay. A last message that still asks for tools is no
   * answer: they are left out, as a later run's answer may cite those
   * results. Default false: left out, so the run's results are replayed
   * whole.
   */
  citedSourcesFromAnswer?: boolean;
}

export interface OpenAiFinishOptions {
  /** The host's id of the run's final assistant message (the replayed tool messages go before it). Default: the completion's id. */
  assistantMessageId?: string;
  /** Default: derived from the last completion (see finishReasonOf). */
  finishReason?: string;
}

/**
 * Records one run of a tool loop, chat completions or Responses: each
 * assistant message with tool_calls (or response with function_call items)
 * as a round, each tool message (or function_call_output) as its result,
 * then how the run ended with the tokens of every model call it saw. A
 * response's reasoning items and its calls' `fc_` ids are recorded with its
 * round (ModelResponseReceived, before the calls), so a replay in the
 * `openai-responses` format gives them back where the API wants them.
 *
 * Await each call before the next step of the loop. The recorder holds the
 * run's round counter and the calls awaiting results; use one per run.
 */
export class OpenAiToolLoopRecorder {
  /** The run being recorded. */
  readonly run: RunPublisher;
  private readonly recording: RunRecording;
  /** By message object: recording the same message again (a retry) publishes the same round, so its events are deduplicated. */
  private readonly rounds = new WeakMap<object, { round: OpenAiRecordedRound; calls: RecordedCall[] }>();
  private readonly countedCompletions = new Set<unknown>();

  constructor(target: RunTarget, options: OpenAiToolLoopOptions = {}) {
    this.run = runOfTarget(target, options.userMessageId);
    this.recording = new RunRecording(this.run, { citedSourcesFromAnswer: options.citedSourcesFromAnswer ?? false });
  }

  /** The tokens of each model call seen so far, in call order. */
  get usage(): readonly TokenUsage[] {
    return this.recording.usage;
  }

  /**
   * Records the message's tool calls as the run's next round (nothing when
   * it has none) and returns them with their arguments parsed; undefined
   * when the message asks for no tool. Pass the completion rather than its
   * message to record the call's token usage.
   */
  async assistantMessage(completionOrMessage: ChatCompletion | OpenAiAssistantMessage): Promise<OpenAiRecordedRound | undefined> {
    const message = assistantMessageOf(completionOrMessage);
    const calls = toolCallsOf(message);
    if (isChatCompletion(completionOrMessage)) this.countUsage(completionOrMessage);
    if (calls.length === 0) return undefined;
    let known = this.rounds.get(message);
    if (known === undefined) {
      const opened = this.recording.calls.openRound(calls)!;
      known = { round: { roundIndex: opened.roundIndex, calls }, calls: opened.calls };
      this.rounds.set(message, known);
    }
    await this.recording.publishCalls(known.calls);
    return known.round;
  }

  /**
   * Records a Responses API response: its function calls as the run's next
   * round (nothing when it has none), with its reasoning items, the calls'
   * item ids and its text published first; its tokens. Returns the calls
   * with their arguments parsed; undefined when it asks for no function.
   * Recording the same response object again (a retry) publishes the same
   * round, so its events are deduplicated.
   */
  async response(response: OpenAiResponse): Promise<OpenAiRecordedRound | undefined> {
    let known = this.rounds.get(response);
    if (known === undefined) {
      const { calls, reasoning, text, usage } = responseRoundOf(response);
      const counted = this.countedCompletions.has(response.id || response);
      this.countedCompletions.add(response.id || response);
      const opened = this.recording.response({
        calls,
        ...(counted || usage === undefined ? {} : { usage }),
        ...(text === undefined ? {} : { text }),
        ...(reasoning === undefined ? {} : { reasoning }),
        responseId: response.id,
      });
      if (opened === undefined) return undefined;
      known = { round: { roundIndex: opened.roundIndex, calls }, calls: opened.calls };
      this.rounds.set(response, known);
    }
    await this.recording.publishCalls(known.calls);
    return known.round;
  }

  /** Records the output like toolOutput and returns the function_call_output item to send to the model (Responses API). */
  async functionCallOutput(
    callId: string,
    output: OpenAiToolOutput,
    options: OpenAiToolOutputOptions = {},
  ): Promise<ResponseInputItem.FunctionCallOutput> {
    await this.toolOutput(callId, output, options);
    return functionCallOutputItem(callId, output);
  }

  /** Records a tool's output as the result of the recorded call `toolCallId`. */
  async toolOutput(toolCallId: string, output: OpenAiToolOutput, options: OpenAiToolOutputOptions = {}): Promise<PublishedEvent> {
    const call = this.recording.calls.latest(toolCallId);
    if (call === undefined) {
      throw new Error(`no recorded tool call has the id ${JSON.stringify(toolCallId)}: record its assistant message first`);
    }
    // Every step is published (a failed one fails its own call only): there is always an acknowledgement.
    return (await this.recording.publishResult(resultOf(call, { result: toolResultOf(output), isError: options.isError ?? false })))!;
  }

  /** Records the output like toolOutput and returns the tool message to send to the model. */
  async toolMessage(
    toolCallId: string,
    output: OpenAiToolOutput,
    options: OpenAiToolOutputOptions = {},
  ): Promise<ChatCompletionToolMessageParam> {
    await this.toolOutput(toolCallId, output, options);
    return { role: 'tool', tool_call_id: toolCallId, content: toolMessageContent(output) };
  }

  /**
   * Records RunCompleted after the loop's last model call: finishReason
   * `stop` when that call answered, `tool_limit` when it still asked for
   * tools (see finishReasonOf), with the usage of every completion passed
   * to assistantMessage or here (each counted once). The run ends once: a
   * later finish() or fail() returns this one's outcome.
   */
  async finish(last: ChatCompletion | OpenAiAssistantMessage | OpenAiResponse, options: OpenAiFinishOptions = {}): Promise<PublishedEvent> {
    if (isOpenAiResponse(last)) return this.finishResponse(last, options);
    if (isChatCompletion(last)) this.countUsage(last);
    const assistantMessageId = options.assistantMessageId ?? (isChatCompletion(last) ? last.id : '');
    if (!assistantMessageId) {
      throw new TypeError('assistantMessageId is required when finish() gets a message without its completion');
    }
    const finishReason = finishReasonOf(last);
    return (await this.recording.complete({
      assistantMessageId,
      finishReason: options.finishReason ?? finishReason,
      endedAfterTools: finishReason !== 'stop',
      answerText: () => answerTextOf(last),
    }))!;
  }

  /** Records RunFailed, with the usage of every completion seen; `error` is whatever was thrown (see describeRunFailure), or a `{ code, message }`. */
  async fail(error: unknown): Promise<PublishedEvent> {
    return (await this.recording.fail({ error: describeRunFailure(error) }))!;
  }

  private async finishResponse(last: OpenAiResponse, options: OpenAiFinishOptions): Promise<PublishedEvent> {
    if (!this.countedCompletions.has(last.id || last)) {
      this.countedCompletions.add(last.id || last);
      const usage = responseUsageOf(last);
      if (usage !== undefined) this.recording.response({ usage });
    }
    const finishReason = responseFinishReasonOf(last);
    return (await this.recording.complete({
      assistantMessageId: options.assistantMessageId ?? last.id,
      finishReason: options.finishReason ?? finishReason,
      endedAfterTools: finishReason !== 'stop',
      answerText: () => responseTextOf(last),
    }))!;
  }

  private countUsage(completion: ChatCompletion): void {
    const key = completion.id || completion;
    if (this.countedCompletions.has(key)) return;
    this.countedCompletions.add(key);
    // A model call without the API's usage is no entry: the run's usage lists the calls that reported theirs.
    const usage = usageOf(completion);
    if (usage !== undefined) this.recording.response({ usage });
  }
}

/**
 * A recorder for one run of a chat-completions tool loop:
 * `recordOpenAiToolLoop(publisher.run(scope))`, or
 * `recordOpenAiToolLoop({ publisher, scope }, { userMessageId })`.
 */
export function recordOpenAiToolLoop(target: RunTarget, options: OpenAiToolLoopOptions = {}): OpenAiToolLoopRecorder {
  return new OpenAiToolLoopRecorder(target, options);
}
