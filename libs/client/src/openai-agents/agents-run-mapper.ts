import type {
  AgentInputItem,
  ModelResponse,
  RunContext,
  RunItem,
  RunToolApprovalItem,
  RunToolCallOutputItem,
  protocol,
} from '@openai/agents';
import { parseToolArguments } from '../openai/openai-completion-mapper';
import { tokenCount } from '../recording/contract-fit';
import { RecordedCalls } from '../recording/recorded-calls';
import {
  type AskedCall,
  decisionOn,
  type RecordedCall,
  type RecordedDecision,
  type RecordedResponse,
  type RecordedResult,
  type RecordedRound,
  resultOf,
  type RunRecord,
} from '../recording/recorded-run';
import type { JsonObject, JsonValue, TokenUsage } from '../tool-event-types';
import { isMarkedToolError, isSdkErrorText } from './agents-tool-errors';

/**
 * What the recorder reads of a run: a RunResult or StreamedRunResult as it
 * is, or the RunState an SDK error carries (see runViewOfState).
 */
export interface AgentsRunView {
  /** Every item of the run's state, in order (a resumed state's earlier items too). */
  readonly newItems: readonly RunItem[];
  /** Every model response of the run's state, in order (a resumed state's earlier ones too). */
  readonly rawResponses: readonly ModelResponse[];
  /** The calls waiting for a person's approval when the run stopped. */
  readonly interruptions?: readonly RunToolApprovalItem[];
  /** Where the SDK keeps the approvals and rejections the host gave. */
  readonly runContext: Pick<RunContext, 'isToolApproved' | 'getRejectionMessage'>;
}

/**
 * What the recorder reads of the SDK's RunState (any context, any agent):
 * the fields its RunResult reads.
 */
export interface AgentsRunState {
  _generatedItems: RunItem[];
  _modelResponses: ModelResponse[];
  _context: AgentsRunView['runContext'];
  getInterruptions(): RunToolApprovalItem[];
}

/**
 * The view of a RunState: what a RunResult made from it would show. For the
 * state an error carries, and for the state a run resumes from.
 */
export function runViewOfState(state: AgentsRunState): AgentsRunView {
  return {
    newItems: state._generatedItems,
    rawResponses: state._modelResponses,
    interruptions: state.getInterruptions(),
    runContext: state._context,
  };
}

/**
 * Where a resumed run starts in its RunState: the responses and items that
 * were there before belong to the run that stopped (it recorded them), and
 * the calls that were waiting for approval then are the ones this run
 * answers.
 */
export interface ResumePoint {
  readonly responseCount: number;
  readonly items: ReadonlySet<RunItem>;
  readonly pending: ReadonlyArray<{ toolCallId: string; toolName: string }>;
}

/** Taken before run(agent, state) resumes `state`: the SDK goes on in the same object. */
export function resumePointOf(state: AgentsRunState): ResumePoint {
  const view = runViewOfState(state);
  return {
    responseCount: view.rawResponses.length,
    items: new Set(view.newItems),
    pending: (view.interruptions ?? []).flatMap((item) => {
      const call = functionCallOf(item.rawItem);
      return call === undefined ? [] : [{ toolCallId: call.callId, toolName: approvalToolName(item, call) }];
    }),
  };
}

/** A function call as recorded: its place in the model response that made it. */
export type AgentsRecordedCall = RecordedCall;

/** A call's output, as the model was sent it. */
export type AgentsRecordedResult = RecordedResult;

/** One model response that asked for tools. */
export type AgentsRecordedRound = RecordedRound;

/** A person's answer to a call the run resumed with. */
export type AgentsRecordedDecision = RecordedDecision;

/** Everything one run of the SDK has to record, in the order to publish it. */
export type AgentsRunRecord = RunRecord;

/** Tells whether a call's output is an error the SDK sent the model in place of a result. */
export type ToolErrorTest = (output: RunToolCallOutputItem, runContext: AgentsRunView['runContext']) => boolean;

/** The placeholder id the SDK gives an item the model gave no id. */
const PLACEHOLDER_ITEM_ID = 'FAKE_ID';

/**
 * The default error test: an output toolErrorFunction marked, or one of the
 * SDK's default texts for a tool that threw or timed out (the texts its
 * default errorFunction and timeout handling send the model).
 */
export const isSdkToolError: ToolErrorTest = (output, runContext) =>
  isMarkedToolError(runContext, output.rawItem.callId) || isSdkErrorText(outputText(output));

export interface AgentsRunRecordOptions {
  /** Default isSdkToolError. */
  isToolError?: ToolErrorTest;
  /** The model recorded with a round's reasoning when its response does not name one (its raw response's `model`). */
  model?: string;
}

/**
 * What `view` (a run's result, or its state) has to record, this run's part
 * only when it resumed from `resumePoint`. Rounds are the model responses
 * that asked for function tools, numbered over the whole state from 0: a
 * resumed run goes on with the numbering of the run it resumes, so a call's
 * round and sequence are the same for every run that names it. A call's
 * sequence is its place among the function calls of its response. Hosted
 * tools (run by the provider) and computer, shell and apply_patch calls are
 * not function calls: they are not recorded.
 */
export function agentsRunRecord(view: AgentsRunView, resumePoint?: ResumePoint, options: AgentsRunRecordOptions = {}): AgentsRunRecord {
  const from = resumePoint?.responseCount ?? 0;
  const calls = new RecordedCalls();
  const rounds: RecordedRound[] = [];
  view.rawResponses.forEach((response, at) => {
    const round = calls.openRound(askedCallsOf(response));
    if (round === undefined || at < from) return;
    const recorded = responseReasoningOf(response, options.model);
    rounds.push(recorded === undefined ? round : { ...round, response: recorded });
  });
  const decisions = decisionsOf(view, resumePoint, calls);
  const denied = new Set(decisions.filter((decision) => !decision.approved).map((decision) => decision.toolCallId));
  const resumedResults = placeOutputs(view, resumePoint, calls, rounds, denied, options.isToolError ?? isSdkToolError);
  placeApprovalRequests(view, resumePoint, calls, rounds);
  const ownResponses = view.rawResponses.slice(from);
  const lastResponse = ownResponses.at(-1);
  const finalMessageId = view.newItems
    .filter((item) => !resumePoint?.items.has(item) && item.type === 'message_output_item')
    .map((item) => item.rawItem?.id)
    .filter((id): id is string => typeof id === 'string' && id !== '' && id !== PLACEHOLDER_ITEM_ID)
    .at(-1);
  return {
    decisions,
    resumedResults,
    rounds,
    usage: ownResponses.map(usageOf),
    awaitingApproval: (view.interruptions?.length ?? 0) > 0,
    endedAfterTools: lastResponse !== undefined && lastResponse.output.some((item) => functionCallOf(item) !== undefined),
    ...(finalMessageId === undefined ? {} : { finalMessageId }),
    ...(lastResponse?.responseId ? { lastResponseId: lastResponse.responseId } : {}),
  };
}

/**
 * What a response that asked for tools hands back with them, for the next
 * request of the turn: its reasoning items as the Responses API gives them
 * (`{ type, id, summary, encrypted_content }`: the SDK keeps the summary as
 * the item's content and the rest in its providerData), its calls' `fc_`
 * item ids, and its text. Undefined when it holds neither reasoning nor an
 * item id, or when no model is named.
 */
export function responseReasoningOf(response: ModelResponse, fallbackModel?: string): RecordedResponse | undefined {
  const named: unknown = response.providerData?.model;
  return roundResponseOf(response.output, typeof named === 'string' && named !== '' ? named : fallbackModel);
}

/**
 * The same of a model response's items as the SDK keeps them (its output, or
 * the items a Session is given for it), recorded for `model` of `provider`
 * (the Responses API's items are OpenAI's unless a session says otherwise).
 */
export function roundResponseOf(
  output: readonly AgentInputItem[],
  model: string | undefined,
  provider = 'openai',
): RecordedResponse | undefined {
  const items = output.flatMap((item) => (item.type === 'reasoning' ? [reasoningItemOf(item)] : []));
  const callItemIds = Object.fromEntries(
    output.flatMap((item) => {
      const call = functionCallOf(item);
      // The item's own id (fc_...): not a placeholder, nor the call id a model without item ids repeats.
      return call?.id && call.id !== PLACEHOLDER_ITEM_ID && call.id !== call.callId ? [[call.callId, call.id]] : [];
    }),
  );
  if ((items.length === 0 && Object.keys(callItemIds).length === 0) || !model) return undefined;
  const text = output
    .flatMap((item) => (item.type === 'message' && item.role === 'assistant' ? item.content : []))
    .map((part) => (part.type === 'output_text' ? part.text : ''))
    .join('');
  return {
    reasoning: {
      provider,
      model,
      ...(items.length === 0 ? {} : { items }),
      ...(Object.keys(callItemIds).length === 0 ? {} : { callItemIds }),
    },
    ...(text === '' ? {} : { text }),
  };
}

/** The Responses API's reasoning item of the SDK's (the inverse of the SDK's own conversion of it). */
function reasoningItemOf(item: protocol.ReasoningItem): JsonObject {
  const data = item.providerData ?? {};
  const encrypted: unknown = data.encrypted_content ?? data.encryptedContent;
  return {
    type: 'reasoning',
    ...(item.id ? { id: item.id } : {}),
    summary: item.content.map((part) => ({ type: 'summary_text', text: part.text })),
    ...(typeof encrypted === 'string' ? { encrypted_content: encrypted } : {}),
    ...(item.rawContent?.length ? { content: item.rawContent.map((part) => ({ type: 'reasoning_text', text: part.text })) } : {}),
  };
}

/** A response's function calls, in its order (hosted tools, computer, shell and apply_patch calls are no function calls). */
function askedCallsOf(response: ModelResponse): AskedCall[] {
  return response.output.flatMap((item) => {
    const call = functionCallOf(item);
    return call === undefined
      ? []
      : [{ toolCallId: call.callId, toolName: call.name, arguments: parseToolArguments(call.arguments ?? '') }];
  });
}

/** The host's answers to the calls that waited when the run resumed, keyed by where the calls sat. */
function decisionsOf(view: AgentsRunView, resumePoint: ResumePoint | undefined, calls: RecordedCalls): RecordedDecision[] {
  return (resumePoint?.pending ?? []).flatMap(({ toolCallId, toolName }) => {
    const call = calls.latest(toolCallId);
    const approved = view.runContext.isToolApproved({ toolName, callId: toolCallId });
    if (call === undefined || approved === undefined) return [];
    const reason = approved ? undefined : view.runContext.getRejectionMessage(toolName, toolCallId);
    return [decisionOn(call, { approved, ...(reason === undefined ? {} : { reason }) })];
  });
}

/**
 * Each output of this run as its call's result: in the call's round when
 * that is one of this run's, else among the resumed results (returned). An
 * output answers the latest call of its id.
 */
function placeOutputs(
  view: AgentsRunView,
  resumePoint: ResumePoint | undefined,
  calls: RecordedCalls,
  rounds: RecordedRound[],
  denied: ReadonlySet<string>,
  isToolError: ToolErrorTest,
): RecordedResult[] {
  const ownRound = new Map(rounds.map((round) => [round.roundIndex, round]));
  const resumed: RecordedResult[] = [];
  for (const item of view.newItems) {
    if (resumePoint?.items.has(item) || !isFunctionOutput(item)) continue;
    const call = calls.latest(item.rawItem.callId);
    // A denied call did not run: its decision says so, and the text the SDK sent instead is no result of the tool.
    if (call === undefined || denied.has(call.toolCallId)) continue;
    const result = resultOf(call, {
      result: toolResultOf(item),
      // A call the SDK refused by a standing rejection (rejectTool's alwaysReject) did not run either.
      isError:
        isToolError(item, view.runContext) ||
        view.runContext.isToolApproved({ toolName: call.toolName, callId: call.toolCallId }) === false,
    });
    const round = ownRound.get(call.roundIndex);
    if (round === undefined) resumed.push(result);
    else round.results.push(result);
  }
  return resumed;
}

/** The calls that stopped this run for approval, in their rounds (not the ones it resumed with, still waiting). */
function placeApprovalRequests(
  view: AgentsRunView,
  resumePoint: ResumePoint | undefined,
  calls: RecordedCalls,
  rounds: RecordedRound[],
): void {
  const alreadyPending = new Set((resumePoint?.pending ?? []).map((pending) => pending.toolCallId));
  for (const item of view.interruptions ?? []) {
    const asked = functionCallOf(item.rawItem);
    const call = asked === undefined ? undefined : calls.latest(asked.callId);
    if (call === undefined || alreadyPending.has(call.toolCallId)) continue;
    rounds.find((round) => round.roundIndex === call.roundIndex)?.approvalRequests.push(call);
  }
}

/**
 * The text of a completed run's final output (a RunResult's `finalOutput`):
 * a text output as it is, a structured one as its JSON text; undefined for
 * a view that has none (a RunState's).
 */
export function finalOutputText(view: AgentsRunView): string | undefined {
  const { finalOutput } = view as { finalOutput?: unknown };
  if (finalOutput === undefined || finalOutput === null) return undefined;
  return typeof finalOutput === 'string' ? finalOutput : JSON.stringify(finalOutput);
}

/** One model call's tokens; the model's name when the provider's raw response names it. */
export function usageOf(response: ModelResponse): TokenUsage {
  const model: unknown = response.providerData?.model;
  return {
    inputTokens: tokenCount(response.usage?.inputTokens),
    outputTokens: tokenCount(response.usage?.outputTokens),
    ...(typeof model === 'string' && model !== '' ? { model } : {}),
  };
}

/**
 * The result to record for a call's output: what the tool returned when it
 * is JSON the SDK sent the model as its JSON text (so the policy's JSON
 * paths apply), else the text the model was sent; an output that is not
 * text (an image, a file, several parts) as its JSON text.
 */
export function toolResultOf(output: RunToolCallOutputItem): JsonValue {
  const text = outputText(output);
  if (text === undefined) return JSON.stringify(output.rawItem.output) ?? '';
  const returned = output.output;
  if (typeof returned === 'object' && returned !== null && isJson(returned) && JSON.stringify(returned) === text) return returned;
  if ((typeof returned === 'number' || typeof returned === 'boolean') && String(returned) === text) return returned;
  return text;
}

/** The text the model was sent for the output, when it was text. */
function outputText(output: RunToolCallOutputItem): string | undefined {
  const sent = output.rawItem.output;
  if (typeof sent === 'string') return sent;
  if (typeof sent === 'object' && sent !== null && !Array.isArray(sent) && sent.type === 'text' && typeof sent.text === 'string') {
    return sent.text;
  }
  return undefined;
}

function isFunctionOutput(item: RunItem): item is RunToolCallOutputItem & { rawItem: protocol.FunctionCallResultItem } {
  return (item.type === 'tool_call_output_item' || item.type === 'handoff_output_item') && item.rawItem?.type === 'function_call_result';
}

function functionCallOf(item: unknown): protocol.FunctionCallItem | undefined {
  if (typeof item !== 'object' || item === null) return undefined;
  const call = item as Partial<protocol.FunctionCallItem>;
  return call.type === 'function_call' && typeof call.callId === 'string' && typeof call.name === 'string'
    ? (call as protocol.FunctionCallItem)
    : undefined;
}

/** The name the SDK keys the call's approval by (a namespaced tool's qualified name). */
function approvalToolName(item: RunToolApprovalItem, call: protocol.FunctionCallItem): string {
  return typeof item.toolName === 'string' && item.toolName !== '' ? item.toolName : call.name;
}

function isJson(value: unknown): value is JsonValue {
  if (value === null || typeof value === 'string' || typeof value === 'boolean') return true;
  if (typeof value === 'number') return Number.isFinite(value);
  if (Array.isArray(value)) return value.every(isJson);
  if (typeof value !== 'object' || Object.getPrototypeOf(value) !== Object.prototype) return false;
  return Object.values(value).every((v) => v !== undefined && isJson(v));
}
