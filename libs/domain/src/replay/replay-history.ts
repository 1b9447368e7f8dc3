import type { JsonObject } from '@toolhistory/contract';
import type { InvocationRow, RunRow, RunStatus } from '../projection/read-model.types';
import { callTokens, resultText, resultTokens, TokenCounter } from '../projection/invocation-tokens';
import { fitTokenBudget } from './token-budget';
import { toAnthropicMessages, toOpenAiChatMessages, ProviderMessage } from './provider-messages';
import { CallContext, CallOmissionReason, CallVerdict, verdictOf } from './replay-call-rules';
import { callScopeOf, RunAsOf, runsAsOf } from './replay-call-context';
import { historyTokenBudget, ReplayPolicy, StaleResultMode } from './replay-policy';
import { anthropicToolUseId, replayedToolCallId } from './replayed-tool-call-id';

export { expiredResultNotice, invalidatedResultNotice } from './replay-call-rules';

export type HistoryFormat = 'openai_chat' | 'anthropic_messages';

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
}

export interface ReplayedCall {
  toolCallId: string;
  toolName: string;
  arguments: JsonObject;
  /** JSON results serialized; replaced by a notice when the result expired and the policy keeps a placeholder. */
  result: string;
  isError: boolean;
  sequenceIndex: number;
  requestedAt: string;
  completedAt: string;
  expired: boolean;
  /** Set when a later mutating call made the result stale and the policy keeps a placeholder: that call's replayed id. */
  invalidatedBy?: string;
  /** What the call and its result (or its notice) take in the model's context. */
  tokens: number;
}

export interface ReplayedRound {
  roundIndex: number;
  calls: ReplayedCall[];
}

export interface ReplayedTurn {
  runId: string;
  assistantMessageId: string | null;
  status: RunStatus;
  rounds: ReplayedRound[];
  messages: ProviderMessage[];
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
  const judged = runsAsOf(scope, runs, invocations).map(({ run, calls }) => replayRun(run, calls, tokens));
  const drafts = judged.flatMap(({ turn }) => (turn === undefined ? [] : [turn]));
  // Over the budget, whole rounds leave oldest first, so what stays is still a valid history.
  const fitted = fitTokenBudget<ReplayedRound, TurnDraft>(drafts, historyTokenBudget(policy, request.channel, request.maxHistoryTokens));
  const omitted = [...judged.flatMap((run) => run.omitted), ...fitted.dropped.flatMap(overBudget)];
  const turns = fitted.turns.map((turn) => ({ ...turn, messages: messagesOf(turn.rounds, request.format) }));
  return { turns, omitted, historyTokens: fitted.tokens };
}

/** Ids are reported as the requested format carries them. */
function reportedIdIn(format: HistoryFormat): (row: InvocationRow) => string {
  return (row) => {
    const recordedOrDerived = replayedToolCallId(row.toolCallId, row);
    return format === 'anthropic_messages' ? anthropicToolUseId(recordedOrDerived) : recordedOrDerived;
  };
}

/** One run's calls judged by the call rules: its turn (none when nothing is kept) and what it leaves out. */
function replayRun(run: RunAsOf, calls: readonly CallContext[], tokens: TokenCounter): { turn?: TurnDraft; omitted: Omission[] } {
  const omitted: Omission[] = [];
  const byRound = new Map<number, ReplayedCall[]>();
  for (const call of calls) {
    const verdict = verdictOf(call);
    if (verdict.kind === 'omitted') {
      omitted.push(omissionOf(call, verdict.reason, verdict.invalidatedBy));
      continue;
    }
    const round = byRound.get(call.row.roundIndex) ?? [];
    round.push(replayedCallOf(call, verdict, tokens));
    byRound.set(call.row.roundIndex, round);
  }
  if (byRound.size === 0) return { omitted };
  const rounds = [...byRound.entries()].sort(([a], [b]) => a - b).map(([roundIndex, kept]) => ({ roundIndex, calls: kept }));
  const { runId, assistantMessageId } = run.run;
  return {
    turn: { runId, assistantMessageId: run.status === 'completed' ? assistantMessageId : null, status: run.status, rounds },
    omitted,
  };
}

/** A kept call as replayed: its own result, or the verdict's notice in its place. */
function replayedCallOf(call: CallContext, verdict: Exclude<CallVerdict, { kind: 'omitted' }>, tokens: TokenCounter): ReplayedCall {
  const { row, toolName } = call;
  const args = row.arguments ?? {};
  const notice = verdict.kind === 'notice' ? verdict.notice : undefined;
  const invalidatedBy = verdict.kind === 'notice' ? verdict.invalidatedBy : undefined;
  // Counted when recorded; rows recorded before counts were kept are counted here.
  const callCost = row.callTokens ?? callTokens(tokens, toolName, args);
  const resultCost = notice !== undefined ? tokens(notice) : (row.resultTokens ?? resultTokens(tokens, row.result));
  return {
    toolCallId: call.toolCallId,
    toolName,
    arguments: args,
    result: notice ?? resultText(row.result),
    isError: notice !== undefined ? false : row.isError === true,
    sequenceIndex: row.sequenceIndex,
    requestedAt: row.requestedAt!,
    completedAt: row.completedAt!,
    expired: verdict.kind === 'notice' && verdict.expired,
    ...(invalidatedBy === undefined ? {} : { invalidatedBy }),
    tokens: callCost + resultCost,
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
    runId: turn.runId,
    roundIndex: round.roundIndex,
    sequenceIndex: call.sequenceIndex,
    toolCallId: call.toolCallId,
    toolName: call.toolName,
    reason: 'token_budget',
  }));
}

function messagesOf(rounds: readonly ReplayedRound[], format: HistoryFormat): ProviderMessage[] {
  return format === 'anthropic_messages' ? toAnthropicMessages(rounds) : toOpenAiChatMessages(rounds);
}
