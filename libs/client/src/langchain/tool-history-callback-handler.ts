import { BaseCallbackHandler } from '@langchain/core/callbacks/base';
import { awaitAllCallbacks } from '@langchain/core/callbacks/promises';
import type { Serialized } from '@langchain/core/load/serializable';
import type { BaseMessage } from '@langchain/core/messages';
import type { LLMResult } from '@langchain/core/outputs';
import type { ChainValues } from '@langchain/core/utils/types';
import type { PublishedEvent, RunPublisher, RunScope, ToolEventPublisher } from '../tool-event-publisher';
import type { TokenUsage } from '../tool-event-types';
import {
  boundedUsage,
  errorResultOf,
  failureDetailOf,
  isControlFlowSignal,
  tokenUsageOf,
  toJsonObject,
  toolCallsOf,
  toolMessagesIn,
  toolOutcomeOf,
  type ToolOutcome,
} from './langchain-payload-converter';
import { OrderedPublishQueue, type PublishFailure } from './ordered-publish-queue';

/** Where the handler publishes: one run's publisher, or a publisher and the run's scope. */
export type ToolHistoryRunTarget = RunPublisher | { publisher: Pick<ToolEventPublisher, 'run'>; scope: RunScope };

export interface ToolHistoryCallbackHandlerOptions {
  /** The host's final assistant message of the run; default: the id of the model's last output (LangChain's `run-<id>` when the model gave none). */
  assistantMessageId?: string;
  /** RunCompleted's finishReason when the agent ended right after executing tools (its last model output asked for tools); default `tool_limit`. */
  finishReasonAfterTools?: string;
  /**
   * true (default): LangChain awaits each publication, so the agent's
   * `invoke()` returns once the run's events are in the broker (every step
   * waits for the broker's acknowledgement). false: the agent does not wait;
   * await `settled()` before relying on the events.
   */
  awaitPublishing?: boolean;
  /** true: a failed publication fails the agent run (LangChain rethrows it). Default false: LangChain logs it, `settled()` rejects with it and `onPublishError` hears of it. */
  raiseError?: boolean;
  /** Called for every event that could not be published (and for a handler used for a second run). */
  onPublishError?: (failure: PublishFailure) => void;
}

/** A call the model asked for, and how far it got. */
interface TrackedCall {
  roundIndex: number;
  sequenceIndex: number;
  toolCallId: string;
  toolName: string;
  /** As LangChain passes a tool run's input: to match a run to a call the model gave no id. */
  argumentsJson: string;
  /** A tool run is executing it: its end or error is the result. */
  claimed: boolean;
  answered: boolean;
}

type RunKind = 'chain' | 'model' | 'tool';

/** LangGraph calls handleInterrupt on callback handlers that carry this symbol (its GraphCallbackHandler's mark). */
const LANGGRAPH_LIFECYCLE_HANDLER: unique symbol = Symbol.for('langgraph.graph_callback_handler');

/**
 * Records one agent run to toolhistory from LangChain's callbacks: pass it
 * in `callbacks` when invoking the agent (a LangGraph graph such as the
 * prebuilt ReAct agent, or any runnable whose tool loop runs inside it).
 *
 * - Each model output with tool calls opens a round (roundIndex counts them
 *   from 0); each call is a ToolCallRequested, sequenceIndex its position.
 * - A tool run's end is the call's ToolResultReceived (an error ToolMessage
 *   or a thrown error is an error result); a call no tool ran (an unknown
 *   tool, arguments the tool refused) is answered by the ToolMessage the
 *   tool node gave the model.
 * - The agent run (the outermost chain run) ending is RunCompleted
 *   (finishReason `stop` when the model's last output asked for no tools,
 *   token usage per model call); its error is RunFailed. A LangGraph
 *   interrupt leaves the run open, and resuming with this handler goes on
 *   with it.
 *
 * Events are published one after the other in that order. One handler per
 * agent run.
 */
export class ToolHistoryCallbackHandler extends BaseCallbackHandler {
  name = 'ToolHistoryCallbackHandler';
  readonly [LANGGRAPH_LIFECYCLE_HANDLER] = true;
  /** The run being recorded. */
  readonly run: RunPublisher;

  private readonly options: ToolHistoryCallbackHandlerOptions;
  private readonly queue: OrderedPublishQueue;
  private readonly runs = new Map<string, { kind: RunKind; parentRunId?: string }>();
  private readonly calledModels = new Map<string, string>();
  private readonly calls: TrackedCall[] = [];
  private readonly toolRuns = new Map<string, TrackedCall>();
  private readonly usage: TokenUsage[] = [];
  private agentRunId: string | undefined;
  private interrupted = false;
  private ended = false;
  private rounds = 0;
  private lastOutputAskedForTools = false;
  private lastAssistantMessageId: string | undefined;

  constructor(target: ToolHistoryRunTarget, options: ToolHistoryCallbackHandlerOptions = {}) {
    super({ raiseError: options.raiseError ?? false, _awaitHandler: options.awaitPublishing ?? true });
    this.run = 'publisher' in target ? target.publisher.run(target.scope) : target;
    this.options = { ...options };
    this.queue = new OrderedPublishQueue(options.onPublishError);
  }

  /** The handler keeps one run's state: LangChain gets the same instance back. */
  override copy(): this {
    return this;
  }

  /**
   * Resolves once every event recorded so far is in the broker, with the
   * acknowledgements in publication order; rejects with
   * ToolHistoryPublishError when any event could not be published. When
   * LangChain runs this handler in the background (awaitPublishing false),
   * waits for LangChain's pending callbacks first.
   */
  async settled(): Promise<PublishedEvent[]> {
    if (!this.awaitHandlers) await awaitAllCallbacks();
    return this.queue.settled();
  }

  // LangChain passes parentRunId fourth (its declaration names it runType).
  override handleChainStart(_chain: Serialized, _inputs: ChainValues, runId: string, parentRunId?: string): void {
    this.runs.set(runId, { kind: 'chain', parentRunId });
    if (parentRunId !== undefined) return;
    if (this.ended || this.agentRunId !== undefined) {
      this.queue.recordFailure({
        event: `agent run ${runId}`,
        error: new Error(
          `ToolHistoryCallbackHandler records one agent run (runId ${this.run.scope.runId}, ` +
            `${this.ended ? 'already ended' : `LangChain run ${this.agentRunId}`}): create a handler per agent run`,
        ),
      });
      return;
    }
    this.agentRunId = runId;
  }

  override handleChatModelStart(
    _llm: Serialized,
    _messages: BaseMessage[][],
    runId: string,
    parentRunId?: string,
    extraParams?: Record<string, unknown>,
    _tags?: string[],
    metadata?: Record<string, unknown>,
  ): void {
    this.modelStarted(runId, parentRunId, extraParams, metadata);
  }

  override handleLLMStart(
    _llm: Serialized,
    _prompts: string[],
    runId: string,
    parentRunId?: string,
    extraParams?: Record<string, unknown>,
    _tags?: string[],
    metadata?: Record<string, unknown>,
  ): void {
    this.modelStarted(runId, parentRunId, extraParams, metadata);
  }

  override handleLLMEnd(output: LLMResult, runId: string, parentRunId?: string): Promise<unknown> | undefined {
    const calledModel = this.calledModels.get(runId);
    this.calledModels.delete(runId);
    if (!this.recording(parentRunId)) return undefined;
    const generation = output.generations[0]?.[0];
    const message = generation !== undefined && 'message' in generation ? (generation.message as BaseMessage) : undefined;
    const usage = tokenUsageOf(message, output.llmOutput, calledModel);
    if (usage !== undefined) this.usage.push(usage);
    if (typeof message?.id === 'string' && message.id.length > 0) this.lastAssistantMessageId = message.id;
    const toolCalls = toolCallsOf(message);
    this.lastOutputAskedForTools = toolCalls.length > 0;
    if (toolCalls.length === 0) return undefined;
    const roundIndex = this.rounds++;
    const occurredAt = new Date();
    return Promise.all(
      toolCalls.map((toolCall, sequenceIndex) => {
        const args = toJsonObject(toolCall.args);
        const call: TrackedCall = {
          roundIndex,
          sequenceIndex,
          toolCallId: toolCall.id ?? '',
          toolName: toolCall.name,
          argumentsJson: JSON.stringify(args),
          claimed: false,
          answered: false,
        };
        this.calls.push(call);
        return this.queue.push(`ToolCallRequested ${describe(call)}`, () =>
          this.run.toolCall({
            roundIndex,
            sequenceIndex,
            toolCallId: call.toolCallId,
            toolName: call.toolName,
            arguments: args,
            occurredAt,
          }),
        );
      }),
    );
  }

  override handleToolStart(
    tool: Serialized,
    input: string,
    runId: string,
    parentRunId?: string,
    _tags?: string[],
    _metadata?: Record<string, unknown>,
    runName?: string,
    toolCallId?: string,
  ): void {
    this.runs.set(runId, { kind: 'tool', parentRunId });
    if (!this.recording(parentRunId)) return;
    const call = this.pendingCall(toolCallId, runName ?? tool?.name, false, input);
    if (call === undefined) return;
    call.claimed = true;
    this.toolRuns.set(runId, call);
  }

  override handleToolEnd(output: unknown, runId: string, parentRunId?: string): Promise<PublishedEvent> | undefined {
    const call = this.toolRuns.get(runId) ?? (this.recording(parentRunId) ? this.callAnsweredBy(output) : undefined);
    this.toolRuns.delete(runId);
    if (call === undefined || call.answered) return undefined;
    return this.publishResult(call, toolOutcomeOf(output, call.toolCallId));
  }

  override handleToolError(error: unknown, runId: string): Promise<PublishedEvent> | undefined {
    const call = this.toolRuns.get(runId);
    this.toolRuns.delete(runId);
    if (call === undefined || call.answered) return undefined;
    if (isControlFlowSignal(error)) {
      // An interrupt inside the tool: the call is still to be answered, when the run resumes.
      call.claimed = false;
      return undefined;
    }
    return this.publishResult(call, { result: errorResultOf(error), isError: true });
  }

  override handleChainEnd(outputs: ChainValues, runId: string, parentRunId?: string): Promise<unknown> | undefined {
    if (runId === this.agentRunId) return this.agentRunEnded();
    if (!this.recording(parentRunId)) return undefined;
    // Calls no tool run answered (an unknown tool, arguments its schema refused): the ToolMessage the tool node gave the model.
    const answers = toolMessagesIn(outputs).flatMap((message) => {
      const call = message.tool_call_id ? this.pendingCall(message.tool_call_id, undefined, false) : undefined;
      return call === undefined ? [] : [this.publishResult(call, toolOutcomeOf(message))];
    });
    return answers.length === 0 ? undefined : Promise.all(answers);
  }

  override handleChainError(error: unknown, runId: string): Promise<PublishedEvent> | undefined {
    if (runId !== this.agentRunId) return undefined;
    if (isControlFlowSignal(error) || this.interrupted) {
      this.pause();
      return undefined;
    }
    this.end();
    const occurredAt = new Date();
    return this.queue.push('RunFailed', () => this.run.fail({ error: failureDetailOf(error), occurredAt }));
  }

  /** LangGraph: the root graph paused (interrupt); its terminal chain callback follows. */
  handleInterrupt(event: { runId?: string }): void {
    if (event?.runId === undefined || event.runId === this.agentRunId) this.interrupted = true;
  }

  private agentRunEnded(): Promise<PublishedEvent> | undefined {
    if (this.interrupted) {
      this.pause();
      return undefined;
    }
    const completion = {
      assistantMessageId: this.options.assistantMessageId ?? this.lastAssistantMessageId ?? `run-${this.agentRunId}`,
      finishReason: this.lastOutputAskedForTools ? (this.options.finishReasonAfterTools ?? 'tool_limit') : 'stop',
      usage: this.usage.length > 0 ? boundedUsage(this.usage) : undefined,
      occurredAt: new Date(),
    };
    this.end();
    return this.queue.push('RunCompleted', () => this.run.complete(completion));
  }

  /** The run stays open: a resumed invocation with this handler goes on with it. */
  private pause(): void {
    this.agentRunId = undefined;
    this.interrupted = false;
    this.runs.clear();
    this.toolRuns.clear();
    for (const call of this.calls) call.claimed = false;
  }

  private end(): void {
    this.ended = true;
    this.runs.clear();
    this.toolRuns.clear();
    this.calledModels.clear();
  }

  private modelStarted(
    runId: string,
    parentRunId?: string,
    extraParams?: Record<string, unknown>,
    metadata?: Record<string, unknown>,
  ): void {
    this.runs.set(runId, { kind: 'model', parentRunId });
    const invocation = extraParams?.invocation_params as { model?: unknown; model_name?: unknown } | undefined;
    const model = [metadata?.ls_model_name, invocation?.model, invocation?.model_name].find((m): m is string => typeof m === 'string');
    if (model !== undefined) this.calledModels.set(runId, model);
  }

  /** Whether a run under `parentRunId` belongs to the agent's loop: not after the run ended, not inside a tool (a tool's own model and tool calls are no round of this run). */
  private recording(parentRunId: string | undefined): boolean {
    if (this.ended) return false;
    const seen = new Set<string>();
    for (let id = parentRunId; id !== undefined && !seen.has(id); id = this.runs.get(id)?.parentRunId) {
      if (this.runs.get(id)?.kind === 'tool') return false;
      seen.add(id);
    }
    return true;
  }

  /**
   * The unanswered call a tool run or ToolMessage belongs to: by tool call
   * id; without one (the model gave none), by tool name and arguments, else
   * by name, the first in call order of the latest round that has one.
   * Claimed calls only when `includeClaimed`.
   */
  private pendingCall(
    toolCallId: string | undefined,
    toolName: string | undefined,
    includeClaimed: boolean,
    argumentsJson?: string,
  ): TrackedCall | undefined {
    const open = this.calls.filter((call) => !call.answered && (includeClaimed || !call.claimed));
    if (toolCallId) return latestRoundFirst(open.filter((call) => call.toolCallId === toolCallId));
    if (toolName === undefined) return undefined;
    const named = open.filter((call) => call.toolName === toolName);
    return latestRoundFirst(named.filter((call) => call.argumentsJson === argumentsJson)) ?? latestRoundFirst(named);
  }

  /** A tool run that could not be matched at its start: the call its ToolMessage answers. */
  private callAnsweredBy(output: unknown): TrackedCall | undefined {
    const id = toolMessagesIn(output)[0]?.tool_call_id;
    return id ? this.pendingCall(id, undefined, true) : undefined;
  }

  private publishResult(call: TrackedCall, outcome: ToolOutcome): Promise<PublishedEvent> {
    call.answered = true;
    const occurredAt = new Date();
    return this.queue.push(`ToolResultReceived ${describe(call)}`, () =>
      this.run.toolResult({
        roundIndex: call.roundIndex,
        sequenceIndex: call.sequenceIndex,
        toolCallId: call.toolCallId,
        result: outcome.result,
        isError: outcome.isError,
        occurredAt,
      }),
    );
  }
}

/** The first (in call order) of the calls of the latest round among `calls`. */
function latestRoundFirst(calls: readonly TrackedCall[]): TrackedCall | undefined {
  const latest = calls.at(-1)?.roundIndex;
  return calls.find((call) => call.roundIndex === latest);
}

function describe(call: TrackedCall): string {
  return `round ${call.roundIndex} call ${call.sequenceIndex} (${call.toolName}${call.toolCallId ? ` ${call.toolCallId}` : ''})`;
}
