import { BaseCallbackHandler } from '@langchain/core/callbacks/base';
import { awaitAllCallbacks } from '@langchain/core/callbacks/promises';
import type { Serialized } from '@langchain/core/load/serializable';
import { type BaseMessage, HumanMessage } from '@langchain/core/messages';
import type { LLMResult } from '@langchain/core/outputs';
import type { ChainValues } from '@langchain/core/utils/types';
import { decisionOn, type ResponseReasoning, resultOf, type ToolOutcome } from '../recording/recorded-run';
import { RunRecording } from '../recording/run-recording';
import { checkFixedScope, runOfTarget } from '../run-target';
import type { PublishedEvent, RunPublisher } from '../run-publisher';
import {
  approvalDecisionOf,
  interruptIdOf,
  interruptReasonOf,
  isInterrupt,
  resumeValueFor,
  type InterruptSignal,
} from './langchain-approvals';
import { LangChainCallTracker, type TrackedCall } from './langchain-call-tracker';
import { messageReasoningOf } from './langchain-reasoning';
import {
  errorResultOf,
  failureDetailOf,
  isControlFlowSignal,
  isToolAbort,
  tokenUsageOf,
  toJsonObject,
  toolCallsOf,
  toolMessagesIn,
  toolOutcomeOf,
} from './langchain-payload-converter';
import type { ToolHistoryCallbackHandlerOptions, ToolHistoryRunTarget } from './langchain-handler-options';

export type { ToolHistoryCallbackHandlerOptions, ToolHistoryRunTarget } from './langchain-handler-options';

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
  private readonly options: ToolHistoryCallbackHandlerOptions;
  private recordingOfRun: RunRecording | undefined;
  private readonly runs = new Map<string, { kind: RunKind; parentRunId?: string }>();
  private readonly calledModels = new Map<string, string>();
  private readonly calls: LangChainCallTracker;
  private readonly toolRuns = new Map<string, TrackedCall>();
  private agentRunId: string | undefined;
  private interrupted = false;
  private ended = false;
  private lastAssistantMessageId: string | undefined;
  /** The invocation resumes the graph with this value (a Command's `resume`). */
  private resume: { value: unknown } | undefined;
  /** The agent's messages as the latest node of the loop got them: where a resumed call of an earlier run sits. */
  private stateMessages: readonly BaseMessage[] = [];

  constructor(target: ToolHistoryRunTarget, options: ToolHistoryCallbackHandlerOptions = {}) {
    super({ raiseError: options.raiseError ?? false, _awaitHandler: options.awaitPublishing ?? true });
    checkFixedScope(target, options.userMessageId);
    this.target = target;
    this.options = { ...options };
    this.calls = new LangChainCallTracker(options.pendingApprovals);
  }

  /** The run being recorded. With a `{ publisher, scope }` target, made when the agent run starts (so it can carry the user's message id), or here. */
  get run(): RunPublisher {
    return this.recording.run;
  }

  /** The run's recording, made with the run (see `run`). */
  private get recording(): RunRecording {
    return (this.recordingOfRun ??= this.openRun(undefined));
  }

  private openRun(inputs: ChainValues | undefined): RunRecording {
    // The input's message id only where the run can take it: a RunPublisher's scope is the host's choice.
    const run =
      'publisher' in this.target ? runOfTarget(this.target, this.options.userMessageId ?? lastHumanMessageId(inputs)) : this.target;
    const { decidedBy, citedSourcesFromAnswer, finishReasonAfterTools, onPublishError } = this.options;
    return new RunRecording(run, { decidedBy, citedSourcesFromAnswer, finishReasonAfterTools, onPublishError });
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
    return this.recordingOfRun?.settled() ?? [];
  }

  // LangChain passes parentRunId fourth (its declaration names it runType).
  override handleChainStart(_chain: Serialized, inputs: ChainValues, runId: string, parentRunId?: string): void {
    this.runs.set(runId, { kind: 'chain', parentRunId });
    if (parentRunId !== undefined) {
      const messages = (inputs as { messages?: unknown } | undefined)?.messages;
      if (Array.isArray(messages) && this.inLoop(parentRunId)) this.stateMessages = messages as BaseMessage[];
      return;
    }
    if (this.ended || this.agentRunId !== undefined) {
      this.recording.reportFailure({
        event: `agent run ${runId}`,
        error: new Error(
          `ToolHistoryCallbackHandler records one agent run (runId ${this.run.scope.runId}, ` +
            `${this.ended ? 'already ended' : `LangChain run ${this.agentRunId}`}): create a handler per agent run`,
        ),
      });
      return;
    }
    this.agentRunId = runId;
    this.recordingOfRun ??= this.openRun(inputs);
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
    if (!this.inLoop(parentRunId)) return undefined;
    const generation = output.generations[0]?.[0];
    const message = generation !== undefined && 'message' in generation ? (generation.message as BaseMessage) : undefined;
    if (typeof message?.id === 'string' && message.id.length > 0) this.lastAssistantMessageId = message.id;
    const round = this.recording.response({
      calls: toolCallsOf(message).map((toolCall) => ({
        toolCallId: toolCall.id ?? '',
        toolName: toolCall.name,
        arguments: toJsonObject(toolCall.args),
      })),
      usage: tokenUsageOf(message, output.llmOutput, calledModel),
      text: message?.text ?? generation?.text ?? '',
      // Its reasoning state, when it carries some: published before its calls, for the next model call of the turn.
      ...withReasoning(messageReasoningOf(message, calledModel)),
    });
    if (round === undefined) return undefined;
    this.calls.track(round.calls);
    const occurredAt = new Date();
    return Promise.all(round.calls.map((call) => this.recording.publishCall({ ...call, occurredAt })));
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
  ): Promise<PublishedEvent | undefined> | undefined {
    this.runs.set(runId, { kind: 'tool', parentRunId });
    if (!this.inLoop(parentRunId)) return undefined;
    const call =
      this.calls.pending(toolCallId, runName ?? tool?.name, false, input) ??
      (this.resume === undefined ? undefined : this.calls.resumed(toolCallId, this.stateMessages));
    if (call === undefined) return undefined;
    call.claimed = true;
    this.toolRuns.set(runId, call);
    return this.decide(call);
  }

  override handleToolEnd(output: unknown, runId: string, parentRunId?: string): Promise<PublishedEvent | undefined> | undefined {
    const call = this.toolRuns.get(runId) ?? (this.inLoop(parentRunId) ? this.callAnsweredBy(output) : undefined);
    this.toolRuns.delete(runId);
    if (call === undefined || call.answered) return undefined;
    return this.publishResult(call, toolOutcomeOf(output, call.call.toolCallId));
  }

  override handleToolError(error: unknown, runId: string): Promise<PublishedEvent | undefined> | undefined {
    const call = this.toolRuns.get(runId);
    this.toolRuns.delete(runId);
    if (call === undefined || call.answered) return undefined;
    if (isInterrupt(error)) return this.requestApproval(call, error);
    if (isControlFlowSignal(error)) {
      // A command for the parent graph: the call is still to be answered, when the run goes on.
      call.claimed = false;
      return undefined;
    }
    // The host aborted the run mid-call: whether the call took effect is unknown, so no result is made up for it
    // (the call stays claimed, so the tool node's error ToolMessage does not answer it either).
    if (isToolAbort(error)) return undefined;
    return this.publishResult(call, { result: errorResultOf(error), isError: true });
  }

  override handleChainEnd(outputs: ChainValues, runId: string, parentRunId?: string): Promise<unknown> | undefined {
    if (runId === this.agentRunId) return this.agentRunEnded();
    if (!this.inLoop(parentRunId)) return undefined;
    // Calls no tool run answered (an unknown tool, arguments its schema refused): the ToolMessage the tool node gave the model.
    const answers = toolMessagesIn(outputs).flatMap((message) => {
      const call = message.tool_call_id ? this.calls.pending(message.tool_call_id, undefined, false) : undefined;
      return call === undefined ? [] : [this.publishResult(call, toolOutcomeOf(message))];
    });
    return answers.length === 0 ? undefined : Promise.all(answers);
  }

  override handleChainError(error: unknown, runId: string): Promise<PublishedEvent | undefined> | undefined {
    if (runId !== this.agentRunId || this.ended) return undefined;
    if (isControlFlowSignal(error) || this.interrupted) return this.interruptedRunEnded();
    this.end();
    // This adapter's RunFailed has never carried the run's usage.
    return this.recording.fail({ error: failureDetailOf(error), usage: null, occurredAt: new Date() });
  }

  /** LangGraph: the root graph paused (interrupt); its terminal chain callback follows. */
  handleInterrupt(event: { runId?: string }): void {
    if (event?.runId === undefined || event.runId === this.agentRunId) this.interrupted = true;
  }

  private agentRunEnded(): Promise<PublishedEvent | undefined> | undefined {
    if (this.ended) return undefined;
    if (this.interrupted) return this.interruptedRunEnded();
    return this.completeRun(false);
  }

  /** The graph paused: the run stays open for this handler to go on with, or ends when a later run resumes (interruptEndsRun). */
  private interruptedRunEnded(): Promise<PublishedEvent | undefined> | undefined {
    if (!this.options.interruptEndsRun) {
      this.pause();
      return undefined;
    }
    // Its last round's results did not all reach the model: it ends as after tools.
    return this.completeRun(true);
  }

  private completeRun(stoppedForApproval: boolean): Promise<PublishedEvent | undefined> {
    const assistantMessageId = this.options.assistantMessageId ?? this.lastAssistantMessageId ?? `run-${this.agentRunId}`;
    this.end();
    return this.recording.complete({ assistantMessageId, stoppedForApproval, occurredAt: new Date() });
  }

  /** The run stays open: a resumed invocation with this handler goes on with it. */
  private pause(): void {
    this.agentRunId = undefined;
    this.interrupted = false;
    this.resume = undefined;
    this.runs.clear();
    this.toolRuns.clear();
    this.calls.releaseAll();
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
  private inLoop(parentRunId: string | undefined): boolean {
    if (this.ended) return false;
    const seen = new Set<string>();
    for (let id = parentRunId; id !== undefined && !seen.has(id); id = this.runs.get(id)?.parentRunId) {
      if (this.runs.get(id)?.kind === 'tool') return false;
      seen.add(id);
    }
    return true;
  }

  /** The tool interrupted: its call waits for a person (ToolApprovalRequested), to be answered when the graph resumes. */
  private requestApproval(call: TrackedCall, signal: InterruptSignal): Promise<PublishedEvent | undefined> | undefined {
    call.claimed = false;
    call.awaitingApproval = { interruptId: interruptIdOf(signal) };
    // A call the model gave no id is left waiting, unrecorded (the recording publishes no approval without an id).
    return this.recording.publishApprovalRequest({ ...call.call, occurredAt: new Date() }, interruptReasonOf(signal));
  }

  /** A call awaiting approval that the graph resumes: ToolApprovalDecided when the resume value says approved or denied. */
  private decide(call: TrackedCall): Promise<PublishedEvent | undefined> | undefined {
    const awaiting = call.awaitingApproval;
    if (awaiting === undefined || this.resume === undefined) return undefined;
    call.awaitingApproval = undefined;
    const decision = approvalDecisionOf(resumeValueFor(this.resume.value, awaiting.interruptId));
    if (decision === undefined) return undefined;
    return this.recording.publishDecision({ ...decisionOn(call.call, decision), decidedBy: decision.decidedBy, occurredAt: new Date() });
  }

  /** A tool run that could not be matched at its start: the call its ToolMessage answers. */
  private callAnsweredBy(output: unknown): TrackedCall | undefined {
    const id = toolMessagesIn(output)[0]?.tool_call_id;
    return id ? this.calls.pending(id, undefined, true) : undefined;
  }

  private publishResult(call: TrackedCall, outcome: ToolOutcome): Promise<PublishedEvent | undefined> {
    call.answered = true;
    return this.recording.publishResult({ ...resultOf(call.call, outcome), occurredAt: new Date() });
  }
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

const withReasoning = (reasoning: ResponseReasoning | undefined) => (reasoning === undefined ? {} : { reasoning });
