import type { JsonObject, JsonValue } from '@toolhistory/contract';
import type { InvocationRow, RunRow, RunStatus } from '../projection/read-model.types';
import type { TokenCounter } from '../projection/invocation-tokens';
import { fitTokenBudget } from './token-budget';
import { HistoryFormat, ProviderMessage } from './provider-messages';
import { translatorOf } from './history-format-translators';
import type { ApprovalState } from '../projection/approval-state';
import type { CallOmissionReason } from './replay-call-rules';
import { callScopeOf, runsAsOf } from './replay-call-context';
import { historyTokenBudget, ReplayPolicy, StaleResultMode } from './replay-policy';
import { replayedToolCallId } from './replayed-tool-call-id';
import { isKept, judgeCalls, omissionsOf, pendingApprovalsOf } from './judged-calls';
import { replayedCallOf } from './replayed-call';
import { type TurnDraft, turnsOf } from './replay-placement';

export { deniedCallNotice, expiredResultNotice, INTERRUPTED_CALL_NOTICE, invalidatedResultNotice } from './replay-call-rules';

export type { HistoryFormat } from './provider-messages';

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

/**
 * The tool-call history a model may see again, per run, at `asOf`. Pure: the
 * same rows, policy and request always give the same bytes. Every call not
 * replayed is listed in `omitted` with its reason. The steps, each a list of
 * rules where a new reason or transformation is one more entry:
 * 1. judge each call on its own (CALL_RULES, replay-call-rules.ts);
 * 2. replay each kept call's result as the result rules make it (RESULT_RULES, replayed-call.ts: citation compaction);
 * 3. place each kept call in its turn and round (PLACEMENT_RULES, replay-placement.ts: resumed runs);
 * 4. fit the whole to the token budget, whole rounds leaving oldest first (token-budget.ts);
 * 5. make each turn's provider messages; list what was left out and the calls waiting for a person.
 */
export function replayHistory(
  request: ReplayRequest,
  runs: readonly RunRow[],
  invocations: readonly InvocationRow[],
  policy: ReplayPolicy,
  tokens: TokenCounter,
): ReplayHistory {
  const scope = callScopeOf(request, invocations, policy, reportedIdIn(request.format));
  const judged = judgeCalls(runsAsOf(scope, runs, invocations));
  const replaying = { format: request.format, tokens, policy, runs: judged.runs };
  const placed = judged.calls.filter(isKept).map((kept) => ({ kept, replayed: replayedCallOf(kept, replaying) }));
  // Over the budget, whole rounds leave oldest first, so what stays is still a valid history.
  const budget = historyTokenBudget(policy, request.channel, request.maxHistoryTokens);
  const fitted = fitTokenBudget<ReplayedRound, TurnDraft>(turnsOf(placed, judged.runs), budget);
  return {
    turns: fitted.turns.map((turn) => ({ ...turn, messages: messagesOf(turn.rounds, request.format) })),
    omitted: [...omissionsOf(judged), ...fitted.dropped.flatMap(overBudget)],
    pendingApprovals: pendingApprovalsOf(judged),
    historyTokens: fitted.tokens,
  };
}

/** Ids are reported as the requested format carries them. */
function reportedIdIn(format: HistoryFormat): (row: InvocationRow) => string {
  return (row) => {
    const recordedOrDerived = replayedToolCallId(row.toolCallId, row);
    return translatorOf(format).toolCallIdOf(recordedOrDerived);
  };
}

function overBudget({ turn, round }: { turn: TurnDraft; round: ReplayedRound }): Omission[] {
  return round.calls.map((call): Omission => ({
    // A resumed round is omitted as its calls were made: in their own run.
    runId: round.resumedFromRunId ?? turn.runId,
    roundIndex: round.roundIndex,
    sequenceIndex: call.sequenceIndex,
    toolCallId: call.toolCallId,
    toolName: call.toolName,
    reason: 'token_budget',
  }));
}

function messagesOf(rounds: readonly ReplayedRound[], format: HistoryFormat): ProviderMessage[] {
  return translatorOf(format).messagesOf(rounds);
}
