/**
 * The replay's request and answer, apart from the rules that make one from
 * the other (replay-history.ts), so that every step of the rules can name
 * them without importing the whole.
 */
import type { JsonObject, JsonValue } from '@toolhistory/contract';
import type { ApprovalState } from '../projection/approval-state';
import type { RunStatus } from '../projection/read-model.types';
import type { HistoryFormat, ProviderMessage } from './provider-messages';
import type { CallOmissionReason } from './replay-call-rules';
import type { StaleResultMode } from './replay-policy';

/** The call rules' reasons (replay-call-rules.ts), and the history's own: over the token budget. */
export type OmissionReason = CallOmissionReason | 'token_budget';

export interface ReplayRequest {
  tenantId: string;
  conversationId: string;
  /** The channel whose settings apply (the request's, else the conversation's). */
  channel: string;
  /** Milliseconds since the epoch: the moment the history is asked for. */
  asOf: number;
  format: HistoryFormat;
  /** Replaces every configured freshness window for this request. */
  freshnessWindowSeconds?: number;
  /** Replaces the configured handling of stale results for this request. */
  staleResults?: StaleResultMode;
  /** Replaces the configured token budget for this request. */
  maxHistoryTokens?: number;
  /** The host's current path of message ids, oldest first; absent or empty: every run counts (replay-call-rules.ts, offBranchRule). */
  branchMessageIds?: readonly string[];
  /** The model the host is about to call: reasoning recorded for another model is not replayed. */
  model?: string;
  /** The provider the host is about to call, for a format that names none (OpenAI chat's rounds for the AI SDK). */
  provider?: string;
}

export interface ReplayedCall {
  toolCallId: string;
  toolName: string;
  arguments: JsonObject;
  /** JSON results serialized; replaced by a notice when the result expired and the policy keeps a placeholder, or never came (denied, interrupted). */
  result: string;
  isError: boolean;
  sequenceIndex: number;
  requestedAt: string;
  /** null when no result was recorded (the notice of a denied or an interrupted call stands for it). */
  completedAt: string | null;
  expired: boolean;
  /** The result is the notice of a side-effect call cut off before its result was recorded. */
  interrupted: boolean;
  approval: ApprovalState;
  /** Set when a later mutating call made the result stale and the policy keeps a placeholder: that call's replayed id. */
  invalidatedBy?: string;
  /** What the call and its result (or its notice) take in the model's context. */
  tokens: number;
  /** The recorded result when it is JSON, not text (none for a notice): for the formats that carry JSON as it is. */
  resultJson?: JsonValue;
  /** Items of the result its run's answer did not cite, left out by the tool's citations rule (citation-compaction.ts). */
  compactedItems: number;
}

export interface ReplayedRound {
  roundIndex: number;
  calls: ReplayedCall[];
  /** Set on a round of an earlier run whose calls a person's decision resolved in this turn's run: that run's id. */
  resumedFromRunId?: string;
  /** The model's response in the round, when recorded: its text, and its reasoning when it may be replayed (round-responses.ts). */
  response?: ReplayedResponse;
  /** A Gemini replay of a turn that goes on: the round's calls carry Google's placeholder signature, lacking their own. */
  reasoningPlaceholder?: boolean;
}

export interface ReplayedTurn {
  runId: string;
  assistantMessageId: string | null;
  /** The host's message that started the run, when its events named it: where a turn without an assistant message goes. */
  afterMessageId: string | null;
  status: RunStatus;
  rounds: ReplayedRound[];
  messages: ProviderMessage[];
}

/** A call that waits for a person's decision at asOf: left out of the turns, listed so the host can ask again. */
export interface PendingApproval {
  toolCallId: string;
  toolName: string;
  arguments: JsonObject;
  runId: string;
  roundIndex: number;
  sequenceIndex: number;
  requestedAt: string;
  reason: string | null;
  /**
   * The model's response in the round the call was made in, as a replay of
   * that round carries it, when recorded and the round is not in the turns
   * (round-responses.ts, pendingWithResponses).
   */
  round?: Pick<ReplayedRound, 'roundIndex' | 'response' | 'reasoningPlaceholder'>;
}

export interface Omission {
  runId: string;
  roundIndex: number;
  sequenceIndex: number;
  toolCallId: string;
  toolName: string;
  reason: OmissionReason;
  /** For 'invalidated': the replayed tool call id of the mutating call. */
  invalidatedBy?: string;
}

export interface ReplayHistory {
  turns: ReplayedTurn[];
  omitted: Omission[];
  /** Oldest request first. */
  pendingApprovals: PendingApproval[];
  /** The tokens of every call and result replayed (invocation-tokens.ts). */
  historyTokens: number;
}

/** Why a recorded round's reasoning is not in the reply; `none`: nothing was left out. */
export type ReasoningOmission = 'none' | 'other_provider' | 'other_model' | 'policy_never' | 'expired' | 'format_has_none';

export interface ReplayedResponse {
  provider: string;
  model: string;
  /** The response's own text beside its calls (redacted). */
  text?: string;
  /** Present when replayed: the provider's items, each as published. */
  reasoning?: JsonObject[];
  /** Tool call id (as recorded) to its signature; replayed with the reasoning. */
  callSignatures?: Record<string, string>;
  /** Tool call id (as recorded) to the provider's item id; replayed with the reasoning. */
  callItemIds?: Record<string, string>;
  reasoningOmitted: ReasoningOmission;
  /** What the text and the replayed reasoning take in the model's context. */
  tokens: number;
}
