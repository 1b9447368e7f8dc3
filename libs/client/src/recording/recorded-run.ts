import type { JsonObject, JsonValue, TokenUsage } from '../tool-event-types';

/*
 * What a recorded run is made of, whatever framework ran it: the one
 * definition every adapter maps its framework's calls, outputs and approvals
 * onto (see RunRecording, which publishes them).
 */

/** Where a call sits in the run that made it: its events (call, result, approval) are keyed by these and its toolCallId. */
export interface CallPosition {
  /** The model response that asked for it, counted over the responses that asked for tools, from 0. */
  roundIndex: number;
  /** Its place among the calls of that response that are recorded (client-run function calls). */
  sequenceIndex: number;
}

/** A call the model asked for, as recorded. */
export interface RecordedCall extends CallPosition {
  /** The id the model gave the call; may be empty (the service then derives a stable one). */
  toolCallId: string;
  toolName: string;
  /** The call's arguments as a JSON object (text that is not one is kept as `{"_raw": text}` by the adapters). */
  arguments: JsonObject;
}

/** What a call gave back, as the model was sent it. */
export interface RecordedResult extends CallPosition {
  toolCallId: string;
  toolName: string;
  result: JsonValue;
  isError: boolean;
}

/** A person's answer to a call that waited for approval, as the host or the framework gives it. */
export interface ApprovalDecision {
  approved: boolean;
  /** The person's reason (a rejection's message), when they gave one. */
  reason?: string;
  /** Who decided, as the host names them. */
  decidedBy?: string;
}

/** A person's answer, keyed by the call it answers (possibly a call of an earlier run). */
export interface RecordedDecision extends CallPosition {
  toolCallId: string;
  toolName: string;
  approved: boolean;
  /** The rejection's message (the text the framework sent the model instead of a result). */
  reason?: string;
}

/** One model response that asked for tools. */
export interface RecordedRound {
  roundIndex: number;
  calls: RecordedCall[];
  results: RecordedResult[];
  /** The round's calls that stopped the run for a person's approval. */
  approvalRequests: RecordedCall[];
  /** The model's response that asked for the round's calls, when its provider handed back reasoning state (published before the calls). */
  response?: RecordedResponse;
}

/**
 * What a reasoning model handed back with a round of calls, which the next
 * request of the same turn must carry back unchanged (docs/adr/027): the
 * provider's own items, as produced, and what it put on the calls.
 */
export interface ResponseReasoning {
  /** `openai`, `anthropic`, `google`, `bedrock`, or another name: replay gives the reasoning back only to it. */
  provider: string;
  model: string;
  /** The items that precede the calls: OpenAI reasoning items, Anthropic thinking blocks, Gemini thought parts, Bedrock reasoningContent blocks. */
  items?: JsonObject[];
  /** Tool call id to the opaque signature on that call (Gemini's thoughtSignature). */
  callSignatures?: Record<string, string>;
  /** Tool call id to the provider's own item id (OpenAI's fc_...). */
  callItemIds?: Record<string, string>;
}

/** A round's model response as recorded: its reasoning, and the text the model said beside its calls. */
export interface RecordedResponse {
  reasoning: ResponseReasoning;
  text?: string;
}

/** A call the model asked for, before the run gives it its place. */
export interface AskedCall {
  toolCallId: string;
  toolName: string;
  arguments: JsonObject;
}

/** What a call's result is, before it is matched to its call. */
export interface ToolOutcome {
  result: JsonValue;
  isError: boolean;
}

/**
 * Everything one run has to record, in the order it is published: the
 * answers to an earlier run's approval requests and those calls' results
 * (keyed by the round and sequence of the run that asked), then each round.
 */
export interface RunRecord {
  /** The answers to the calls that waited for approval when the run resumed. */
  decisions: RecordedDecision[];
  /** The outputs of those calls (an approved call's), keyed by the round and sequence of the run that asked. */
  resumedResults: RecordedResult[];
  rounds: RecordedRound[];
  /** The tokens of each model call of this run, in order. */
  usage: TokenUsage[];
  /** The run stopped for a person's approval. */
  awaitingApproval: boolean;
  /** The run's last model response asked for tools: the run ended right after executing them. */
  endedAfterTools: boolean;
  /** The id the model gave the run's last assistant message, when it gave one. */
  finalMessageId?: string;
  /** The id of the run's last model response, when the model gives ids. */
  lastResponseId?: string;
}

/** A result of `call`. */
export function resultOf(call: RecordedCall, outcome: ToolOutcome): RecordedResult {
  const { roundIndex, sequenceIndex, toolCallId, toolName } = call;
  return { roundIndex, sequenceIndex, toolCallId, toolName, result: outcome.result, isError: outcome.isError };
}

/** The answer `decision` to `call`. */
export function decisionOn(call: RecordedCall, decision: Pick<ApprovalDecision, 'approved' | 'reason'>): RecordedDecision {
  const { roundIndex, sequenceIndex, toolCallId, toolName } = call;
  return {
    roundIndex,
    sequenceIndex,
    toolCallId,
    toolName,
    approved: decision.approved,
    ...(decision.reason === undefined ? {} : { reason: decision.reason }),
  };
}
