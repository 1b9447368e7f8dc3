import { BaseCallbackHandler } from '@langchain/core/callbacks/base';
import { awaitAllCallbacks } from '@langchain/core/callbacks/promises';
import type { Serialized } from '@langchain/core/load/serializable';
import { type BaseMessage, HumanMessage } from '@langchain/core/messages';
import type { LLMResult } from '@langchain/core/outputs';
import type { ChainValues } from '@langchain/core/utils/types';
import { citedSourcesFrom } from '../cited-sources';
import type { PendingApproval } from '../generated/toolhistory/v1/toolhistory';
import { checkFixedScope, type RunTarget, runOfTarget } from '../run-target';
import type { PublishedEvent, RunPublisher } from '../tool-event-publisher';
import type { TokenUsage } from '../tool-event-types';
import {
  approvalDecisionOf,
  callPositionIn,
  interruptIdOf,
  interruptReasonOf,
  isInterrupt,
  resumeValueFor,
  type InterruptSignal,
} from './langchain-approvals';
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
export type ToolHistoryRunTarget = RunTarget;

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
  /**
   * The host's id of the message that started the run, carried by every
   * event. Default: the id of the last HumanMessage of the agent's input,
   * when the target is `{ publisher, scope }` (a RunPublisher's scope is
   * fixed: give it there).
   */
  userMessageId?: string;
  /**
   * true: an interrupt ends the run (RunCompleted, finishReason as after
   * tools), for a host that resumes the graph in a later run with another
   * handler. Default false: the run stays open and resuming with this
   * handler goes on with it.
   */
  interruptEndsRun?: boolean;
  /**
   * The calls awaiting approval that this run may resume, as the replay
   * lists them (getReplayHistory's `pendingApprovals`): a resumed tool's
   * call of an earlier run is recorded with its round and sequence from
   * here. Without them, the handler places it by the agent's messages (see
   * callPositionIn), which is right for a call of a run that began at the
   * user's message.
   */
  pendingApprovals?: ReadonlyArray<Pick<PendingApproval, 'toolCallId' | 'roundIndex' | 'sequenceIndex'>>;
  /** Who decided, when the resume value says it was approved or denied but not by whom. */
  decidedBy?: string;
  /**
   * true: RunCompleted's `citedSources` are the `[sourceN]` the answer
   * cites (citedSourcesFrom of the text of the model's last output), and
   * `[]` when it cites none, which drops every item of the results a
   * policy `citations` rule names from this run's replay. A run that ends
   * without an answer (its last output asked for tools, an interrupt ended
   * it, or no model output was seen) leaves them out: a later run's answer
   * may cite those results.
   * Default false: left out, so the run's results are replayed whole.
   */
  citedSourcesFromAnswer?: boolean;
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
  /** The tool interrupted (asked for approval); the run that resumes it may record the decision. */
  awaitingApproval?: { interruptId?: string };
  /** Made by an earlier run, resumed by this one: not one of this run's rounds. */
  fromEarlierRun?: boolean;
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
 * - A LangGraph interrupt inside a tool (`interrupt()`) is
 *   ToolApprovalRequested for its call, no result and no failure. The run
 *   stays open, and resuming with this handler goes on with it (or, with
 *   `interruptEndsRun`, it completes and a later run's handler resumes).
 *   When the graph resumes (`Command({ resume })`), a resume value that
 *   says approved or denied (see approvalDecisionOf) is ToolApprovalDecided,
 *   and the tool's end the call's result, both keyed by the call's
 *   toolCallId, round and sequence, in the run that resumed. What else the
 *   value meant (free text, edited arguments) is the tool's business: no
 *   decision is recorded for it.
 * - The agent run (the outermost chain run) ending is RunCompleted
 *   (finishReason `stop` when the model's last output asked for no tools,
 *   token usage per model call); its error is RunFailed.
 *
 * Events are published one after the other in that order. One handler per
 * agent run.
 */
export class ToolHistoryCallbackHandler extends BaseCallbackHandler {
  name = 'ToolHistoryCallbackHandler';
  readonly [LANGGRAPH_LIFECYCLE_HANDLER] = true;
  private readonly target: ToolHistoryRunTarget;
  private publisherOfRun: RunPublisher | undefined;
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
  /** The text of the model's last output (the answer, when it asked for no tools); undefined before the model's first output. */
  private lastOutputText: string | undefined;
  /** The invocation resumes the graph with this value (a Command's `resume`). */
  private resume: { value: unknown } | undefined;
  /** The agent's messages as the latest node of the loop got them: where a resumed call of an earlier run sits. */
  private stateMessages: readonly BaseMessage[] = [];

  constructor(target: ToolHistoryRunTarget, options: ToolHistoryCallbackHandlerOptions = {}) {
    super({ raiseError: options.raiseError ?? false, _awaitHandler: options.awaitPublishing ?? true });
    checkFixedScope(target, options.userMessageId);
    this.target = target;
    this.options = { ...options };
    this.queue = new OrderedPublishQueue(options.onPublishError);
  }

  /** The run being recorded. With a `{ publisher, scope }` target, made when the agent run starts (so it can carry the user's message id), or here. */
  get run(): RunPublisher {
    return (this.publisherOfRun ??= this.openRun(undefined));
  }

  private openRun(inputs: ChainValues | undefined): RunPublisher {
    // The input's message id only where the run can take it: a RunPublisher's scope is the host's choice.
    if (!('publisher' in this.target)) return this.target;
    return runOfTarget(this.target, this.options.userMessageId ?? lastHumanMessageId(inputs));
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
  override handleChainStart(_chain: Serialized, inputs: ChainValues, runId: string, parentRunId?: string): void {
    this.runs.set(runId, { kind: 'chain', parentRunId });
    if (parentRunId !== undefined) {
      const messages = (inputs as { messages?: unknown } | undefined)?.messages;
      if (Array.isArray(messages) && this.recording(parentRunId)) this.stateMessages = messages as BaseMessage[];
      return;
    }
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
    this.publisherOfRun ??= this.openRun(inputs);
    this.resume = resumeOf(inputs);
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
    this.lastOutputText = message?.text ?? generation?.text ?? '';
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
  ): Promise<PublishedEvent> | undefined {
    this.runs.set(runId, { kind: 'tool', parentRunId });
    if (!this.recording(parentRunId)) return undefined;
    const call = this.pendingCall(toolCallId, runName ?? tool?.name, false, input) ?? this.resumedCall(toolCallId);
    if (call === undefined) return undefined;
    call.claimed = true;
    this.toolRuns.set(runId, call);
    return this.decide(call);
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
    if (isInterrupt(error)) return this.requestApproval(call, error);
    if (isControlFlowSignal(error)) {
      // A command for the parent graph: the call is still to be answered, when the run goes on.
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
    if (runId !== this.agentRunId || this.ended) return undefined;
    if (isControlFlowSignal(error) || this.interrupted) return this.interruptedRunEnded();
    this.end();
    const occurredAt = new Date();
    return this.queue.push('RunFailed', () => this.run.fail({ error: failureDetailOf(error), occurredAt }));
  }

  /** LangGraph: the root graph paused (interrupt); its terminal chain callback follows. */
  handleInterrupt(event: { runId?: string }): void {
    if (event?.runId === undefined || event.runId === this.agentRunId) this.interrupted = true;
  }

  private agentRunEnded(): Promise<PublishedEvent> | undefined {
    if (this.ended) return undefined;
    if (this.interrupted) return this.interruptedRunEnded();
    return this.completeRun();
  }

  /** The graph paused: the run stays open for this handler to go on with, or ends when a later run resumes (interruptEndsRun). */
  private interruptedRunEnded(): Promise<PublishedEvent> | undefined {
    if (!this.options.interruptEndsRun) {
      this.pause();
      return undefined;
    }
    // Its last round's results did not all reach the model: it ends as after tools.
    this.lastOutputAskedForTools = true;
    return this.completeRun();
  }

  private completeRun(): Promise<PublishedEvent> {
    const answered = !this.lastOutputAskedForTools;
    const completion = {
      assistantMessageId: this.options.assistantMessageId ?? this.lastAssistantMessageId ?? `run-${this.agentRunId}`,
      finishReason: answered ? 'stop' : (this.options.finishReasonAfterTools ?? 'tool_limit'),
      usage: this.usage.length > 0 ? boundedUsage(this.usage) : undefined,
      ...(this.options.citedSourcesFromAnswer && answered && this.lastOutputText !== undefined
        ? { citedSources: citedSourcesFrom(this.lastOutputText) }
        : {}),
      occurredAt: new Date(),
    };
    this.end();
    return this.queue.push('RunCompleted', () => this.run.complete(completion));
  }

  /** The run stays open: a resumed invocation with this handler goes on with it. */
  private pause(): void {
    this.agentRunId = undefined;
    this.interrupted = false;
    this.resume = undefined;
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

  /**
   * A tool the resumed graph runs again for a call of an earlier run (one
   * this handler did not see asked for): tracked with the call's round and
   * sequence from `pendingApprovals`, else placed by the agent's messages.
   * LangGraph runs the whole tool node again, so the other calls of the
   * interrupted round run again too: without `pendingApprovals` a call is
   * taken as the one that waited only when it is its round's one call (which
   * call of several interrupted, the callbacks do not tell); the others'
   * first results are in the run that first ran them.
   */
  private resumedCall(toolCallId: string | undefined): TrackedCall | undefined {
    if (this.resume === undefined || !toolCallId || this.calls.some((call) => call.toolCallId === toolCallId)) return undefined;
    const { pendingApprovals } = this.options;
    const placed = callPositionIn(this.stateMessages, toolCallId);
    const position =
      pendingApprovals === undefined
        ? placed?.callsInRound === 1
          ? placed
          : undefined
        : [...pendingApprovals].reverse().find((pending) => pending.toolCallId === toolCallId);
    if (position === undefined) return undefined;
    const call: TrackedCall = {
      roundIndex: position.roundIndex,
      sequenceIndex: position.sequenceIndex,
      toolCallId,
      toolName: placed?.toolName ?? '',
      argumentsJson: '',
      claimed: false,
      answered: false,
      awaitingApproval: {},
      fromEarlierRun: true,
    };
    this.calls.push(call);
    return call;
  }

  /** The tool interrupted: its call waits for a person (ToolApprovalRequested), to be answered when the graph resumes. */
  private requestApproval(call: TrackedCall, signal: InterruptSignal): Promise<PublishedEvent> | undefined {
    call.claimed = false;
    call.awaitingApproval = { interruptId: interruptIdOf(signal) };
    // The contract names an approval's call by its id: a call the model gave none is left waiting, unrecorded.
    if (!call.toolCallId) return undefined;
    const reason = interruptReasonOf(signal);
    const occurredAt = new Date();
    return this.queue.push(`ToolApprovalRequested ${describe(call)}`, () =>
      this.run.approvalRequested({
        roundIndex: call.roundIndex,
        sequenceIndex: call.sequenceIndex,
        toolCallId: call.toolCallId,
        ...(reason === undefined ? {} : { reason }),
        occurredAt,
      }),
    );
  }

  /** A call awaiting approval that the graph resumes: ToolApprovalDecided when the resume value says approved or denied. */
  private decide(call: TrackedCall): Promise<PublishedEvent> | undefined {
    const awaiting = call.awaitingApproval;
    if (awaiting === undefined || this.resume === undefined) return undefined;
    call.awaitingApproval = undefined;
    const decision = approvalDecisionOf(resumeValueFor(this.resume.value, awaiting.interruptId));
    if (decision === undefined || !call.toolCallId) return undefined;
    const decidedBy = decision.decidedBy ?? this.options.decidedBy;
    const occurredAt = new Date();
    return this.queue.push(`ToolApprovalDecided ${describe(call)}`, () =>
      this.run.approvalDecided({
        roundIndex: call.roundIndex,
        sequenceIndex: call.sequenceIndex,
        toolCallId: call.toolCallId,
        approved: decision.approved,
        ...(decision.reason === undefined ? {} : { reason: decision.reason }),
        ...(decidedBy === undefined ? {} : { decidedBy }),
        occurredAt,
      }),
    );
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
        // A call of an earlier run: the publisher learns its tool (for the per-tool result limit) only from here.
        ...(call.toolName ? { toolName: call.toolName } : {}),
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

/** The value a Command resumes the graph with, when the invocation's input is one (recognised by shape: this package does not depend on LangGraph). */
function resumeOf(inputs: unknown): { value: unknown } | undefined {
  const command = inputs as { lg_name?: unknown; resume?: unknown } | null | undefined;
  return command?.lg_name === 'Command' && command.resume !== undefined ? { value: command.resume } : undefined;
}

/** The id of the last HumanMessage of an agent's input (`{ messages }`, or a list of messages). */
function lastHumanMessageId(inputs: unknown): string | undefined {
  const messages = Array.isArray(inputs) ? inputs : (inputs as { messages?: unknown } | undefined)?.messages;
  if (!Array.isArray(messages)) return undefined;
  for (let i = messages.length - 1; i >= 0; i--) {
    const message: unknown = messages[i];
    if (HumanMessage.isInstance(message)) return typeof message.id === 'string' && message.id !== '' ? message.id : undefined;
  }
  return undefined;
}
