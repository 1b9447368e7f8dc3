import type { JsonObject, JsonValue } from '@toolhistory/contract';
import type { InvocationRow, RunRow, RunStatus } from '../projection/read-model.types';
import { callTokens, resultText, resultTokens, TokenCounter } from '../projection/invocation-tokens';
import { fitTokenBudget } from './token-budget';
import { HistoryFormat, ProviderMessage } from './provider-messages';
import { resultWrapping, translatorOf } from './history-format-translators';
import type { ApprovalState } from '../projection/approval-state';
import { CallContext, CallOmissionReason, CallVerdict, verdictOf } from './replay-call-rules';
import { callScopeOf, laterRunOf, RunAsOf, runsAsOf } from './replay-call-context';
import { citationRule, historyTokenBudget, ReplayPolicy, StaleResultMode } from './replay-policy';
import { CallCitations, callCitations, compactCitedItems } from './citation-compaction';
import { replayedToolCallId } from './replayed-tool-call-id';

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

type TurnDraft = Omit<ReplayedTurn, 'messages'>;

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
 * replayed is listed in `omitted` with its reason. Each call is judged on
 * its own by CALL_RULES (replay-call-rules.ts); the token budget then
 * weighs what is kept as a whole.
 */
export function replayHistory(
  request: ReplayRequest,
  runs: readonly RunRow[],
  invocations: readonly InvocationRow[],
  policy: ReplayPolicy,
  tokens: TokenCounter,
): ReplayHistory {
  const scope = callScopeOf(request, invocations, policy, reportedIdIn(request.format));
  const judged = judgeCalls(runsAsOf(scope, runs, invocations), tokens, request.format, policy);
  const drafts = judged.turns;
  // Over the budget, whole rounds leave oldest first, so what stays is still a valid history.
  const fitted = fitTokenBudget<ReplayedRound, TurnDraft>(drafts, historyTokenBudget(policy, request.channel, request.maxHistoryTokens));
  const omitted = [...judged.omitted, ...fitted.dropped.flatMap(overBudget)];
  const turns = fitted.turns.map((turn) => ({ ...turn, messages: messagesOf(turn.rounds, request.format) }));
  return { turns, omitted, pendingApprovals: judged.pendingApprovals, historyTokens: fitted.tokens };
}

/** Ids are reported as the requested format carries them. */
function reportedIdIn(format: HistoryFormat): (row: InvocationRow) => string {
  return (row) => {
    const recordedOrDerived = replayedToolCallId(row.toolCallId, row);
    return translatorOf(format).toolCallIdOf(recordedOrDerived);
  };
}

interface JudgedCalls {
  turns: TurnDraft[];
  omitted: Omission[];
  pendingApprovals: PendingApproval[];
}

/**
 * Every run's calls judged by the call rules, grouped into turns: a turn
 * per run with something kept, its resumed calls (from earlier runs) first,
 * then its own rounds. Each call is either in a turn or omitted, once.
 */
function judgeCalls(
  runs: ReadonlyArray<{ run: RunAsOf; calls: readonly CallContext[] }>,
  tokens: TokenCounter,
  format: HistoryFormat,
  policy: ReplayPolicy,
): JudgedCalls {
  const omitted: Omission[] = [];
  const pendingApprovals: PendingApproval[] = [];
  const own = new Map<string, Map<number, ReplayedCall[]>>();
  const resumed = new Map<string, Map<string, ReplayedCall[]>>();
  const runsById = new Map(runs.map(({ run }) => [run.run.runId, run]));
  for (const { run, calls } of runs) {
    for (const call of calls) {
      const verdict = verdictOf(call);
      if (verdict.kind === 'omitted') {
        omitted.push(omissionOf(call, verdict.reason, verdict.invalidatedBy));
        if (verdict.reason === 'awaiting_approval') pendingApprovals.push(pendingApprovalOf(call));
        continue;
      }
      const citations = callCitations(call, citationRule(policy, call.toolName), runsById);
      const replayed = withFormatTokens(replayedCallOf(call, verdict, tokens, citations), format, tokens);
      // Its own run, unless a person's decision resolved it in a later one, where the model went on from their answer.
      const laterRun = laterRunOf(call.row, call.hasResult, call.approval);
      if (laterRun !== null && runsById.has(laterRun)) {
        // Keyed by origin run, then round: rounds of earlier runs keep their order.
        const byOrigin = resumed.get(laterRun) ?? new Map<string, ReplayedCall[]>();
        const originKey = `${run.run.runId}\u0000${call.row.roundIndex}`;
        appendTo(byOrigin, originKey, replayed);
        resumed.set(laterRun, byOrigin);
      } else {
        const byRound = own.get(run.run.runId) ?? new Map<number, ReplayedCall[]>();
        appendTo(byRound, call.row.roundIndex, replayed);
        own.set(run.run.runId, byRound);
      }
    }
  }
  const turns: TurnDraft[] = [];
  for (const { run } of runs) {
    const { runId, assistantMessageId, userMessageId } = run.run;
    const resumedRounds = [...(resumed.get(runId)?.entries() ?? [])].map(([originKey, calls]) => {
      const [origin, roundIndex] = originKey.split('\u0000');
      return { roundIndex: Number(roundIndex), calls, resumedFromRunId: origin };
    });
    const ownRounds = [...(own.get(runId)?.entries() ?? [])]
      .sort(([a], [b]) => a - b)
      .map(([roundIndex, calls]) => ({ roundIndex, calls }));
    if (resumedRounds.length === 0 && ownRounds.length === 0) continue;
    turns.push({
      runId,
      assistantMessageId: run.status === 'completed' ? assistantMessageId : null,
      afterMessageId: userMessageId,
      status: run.status,
      rounds: [...resumedRounds, ...ownRounds],
    });
  }
  pendingApprovals.sort((a, b) => Date.parse(a.requestedAt) - Date.parse(b.requestedAt));
  return { turns, omitted, pendingApprovals };
}

/** The tokens are of what the format sends: its wrapping of the result text counts too. */
function withFormatTokens(call: ReplayedCall, format: HistoryFormat, tokens: TokenCounter): ReplayedCall {
  const wrapping = resultWrapping(format, call);
  return wrapping === '' ? call : { ...call, tokens: call.tokens + tokens(wrapping) };
}

function appendTo<K, V>(lists: Map<K, V[]>, key: K, value: V): void {
  const list = lists.get(key);
  if (list === undefined) lists.set(key, [value]);
  else list.push(value);
}

function pendingApprovalOf(call: CallContext): PendingApproval {
  const { row } = call;
  return {
    toolCallId: call.toolCallId,
    toolName: call.toolName,
    arguments: row.arguments ?? {},
    runId: row.runId,
    roundIndex: row.roundIndex,
    sequenceIndex: row.sequenceIndex,
    requestedAt: row.approvalRequestedAt ?? row.requestedAt!,
    reason: row.approvalRequestReason,
  };
}

/**
 * A kept call as replayed: its own result (only its cited items, when a
 * citations rule applies), or the verdict's notice in its place.
 */
function replayedCallOf(
  call: CallContext,
  verdict: Exclude<CallVerdict, { kind: 'omitted' }>,
  tokens: TokenCounter,
  citations: CallCitations | undefined,
): ReplayedCall {
  const { row, toolName } = call;
  const args = row.arguments ?? {};
  const notice = verdict.kind === 'notice' ? verdict : undefined;
  const compacted =
    notice === undefined && citations !== undefined && row.result !== undefined
      ? compactCitedItems(row.result, citations.rule, citations.citedSources)
      : { result: row.result, compactedItems: 0 };
  const result = compacted.result;
  // Counted when recorded; rows recorded before counts were kept are counted here. A compacted result is counted as replayed.
  const callCost = row.callTokens ?? callTokens(tokens, toolName, args);
  const resultCost =
    notice !== undefined
      ? tokens(notice.notice)
      : compacted.compactedItems > 0
        ? resultTokens(tokens, result)
        : (row.resultTokens ?? resultTokens(tokens, result));
  return {
    toolCallId: call.toolCallId,
    toolName,
    arguments: args,
    result: notice?.notice ?? resultText(result),
    isError: notice !== undefined ? notice.isError === true : row.isError === true,
    sequenceIndex: row.sequenceIndex,
    requestedAt: row.requestedAt!,
    completedAt: call.hasResult ? row.completedAt : null,
    expired: notice?.expired === true,
    interrupted: notice?.interrupted === true,
    approval: call.approval,
    ...(notice?.invalidatedBy === undefined ? {} : { invalidatedBy: notice.invalidatedBy }),
    tokens: callCost + resultCost,
    ...(notice === undefined && result !== undefined && typeof result !== 'string' ? { resultJson: result } : {}),
    compactedItems: compacted.compactedItems,
  };
}

function omissionOf(call: CallContext, reason: OmissionReason, invalidatedBy?: string): Omission {
  const { runId, roundIndex, sequenceIndex } = call.row;
  return {
    runId,
    roundIndex,
    sequenceIndex,
    toolCallId: call.toolCallId,
    toolName: call.toolName,
    reason,
    ...(invalidatedBy === undefined ? {} : { invalidatedBy }),
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
