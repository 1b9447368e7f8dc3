import { millisOf as at } from '../projection/row-time';
import type { JsonObject } from '@toolhistory/contract';
import type { InvocationRow, RunRow, RunStatus } from '../projection/read-model.types';
import { callTokens, resultText, resultTokens, TokenCounter } from '../projection/invocation-tokens';
import { fitTokenBudget } from './token-budget';
import { toAnthropicMessages, toOpenAiChatMessages, ProviderMessage } from './provider-messages';
import { findInvalidations } from './causal-invalidation';
import {
  freshnessWindowSeconds,
  historyTokenBudget,
  invalidationRules,
  persistMode,
  ReplayPolicy,
  StaleResultMode,
  staleResultMode,
  visibilityOf,
} from './replay-policy';
import { anthropicToolUseId, replayedToolCallId } from './replayed-tool-call-id';

export type HistoryFormat = 'openai_chat' | 'anthropic_messages';

export type OmissionReason =
  | 'stale'
  | 'orphan_call'
  | 'orphan_result'
  | 'run_failed'
  | 'run_incomplete'
  | 'trailing_unsent'
  | 'policy_skipped'
  | 'invalidated'
  | 'token_budget';

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

export function expiredResultNotice(toolName: string, windowSeconds: number): string {
  return `[expired] This ${toolName} result is older than ${windowSeconds} seconds and may be out of date; call the tool again for current data.`;
}

export function invalidatedResultNotice(toolName: string, mutatingToolName: string, mutatingCallId: string): string {
  return `[invalidated] This ${toolName} result was made stale by a later ${mutatingToolName} call (${mutatingCallId}); call the tool again for current data.`;
}

function byPosition(a: InvocationRow, b: InvocationRow): number {
  return a.roundIndex - b.roundIndex || a.sequenceIndex - b.sequenceIndex || (a.pairKey < b.pairKey ? -1 : a.pairKey > b.pairKey ? 1 : 0);
}

/**
 * The tool-call history a model may see again, per run, at `asOf`. Pure: the
 * same rows, policy and request always give the same bytes. Every call not
 * replayed is listed in `omitted` with its reason.
 */
export function replayHistory(
  request: ReplayRequest,
  runs: readonly RunRow[],
  invocations: readonly InvocationRow[],
  policy: ReplayPolicy,
  tokens: TokenCounter,
): ReplayHistory {
  const { asOf } = request;
  const visibility = visibilityOf(policy, request.channel);
  const byRun = new Map<string, InvocationRow[]>();
  for (const row of invocations) {
    const list = byRun.get(row.runId) ?? [];
    list.push(row);
    byRun.set(row.runId, list);
  }

  const orderedRuns = runs
    .filter((run) => at(run.startedAt) <= asOf)
    .sort((a, b) => at(a.startedAt) - at(b.startedAt) || (a.runId < b.runId ? -1 : a.runId > b.runId ? 1 : 0));

  const drafts: TurnDraft[] = [];
  const omitted: Omission[] = [];
  const invalidated = findInvalidations(invocations, (toolName) => invalidationRules(policy, toolName), asOf);
  // Ids are reported as the requested format carries them.
  const replayedId = (row: InvocationRow) => {
    const recordedOrDerived = replayedToolCallId(row.toolCallId, row);
    return request.format === 'anthropic_messages' ? anthropicToolUseId(recordedOrDerived) : recordedOrDerived;
  };

  for (const run of orderedRuns) {
    // The run as it stood at asOf: later events had not happened yet.
    const ended = run.status !== 'running' && run.endedAt !== null && at(run.endedAt) <= asOf;
    const status: RunStatus = ended ? run.status : 'running';
    const endedAt = ended ? at(run.endedAt) : Number.POSITIVE_INFINITY;
    const rows = (byRun.get(run.runId) ?? [])
      .map((row) => ({
        row,
        hasCall: row.callEventId !== null && at(row.requestedAt) <= asOf,
        hasResult: row.resultEventId !== null && at(row.completedAt) <= asOf,
      }))
      .filter((r) => r.hasCall || r.hasResult)
      .sort((a, b) => byPosition(a.row, b.row));

    // A call requested after its run ended never reached the model.
    const late = (r: { row: InvocationRow; hasCall: boolean }) => r.hasCall && at(r.row.requestedAt) > endedAt;
    const lastRound = Math.max(-1, ...rows.filter((r) => r.hasCall && !late(r)).map((r) => r.row.roundIndex));
    // The last round's results reached a later service call only if the model then answered.
    const lastRoundSent = status === 'completed' && run.finishReason === 'stop';

    const kept = new Map<number, ReplayedCall[]>();
    for (const { row, hasCall, hasResult } of rows) {
      const toolName = row.toolName ?? '';
      const toolCallId = replayedId(row);
      const omit = (reason: OmissionReason, invalidatedBy?: string) =>
        omitted.push({
          runId: run.runId,
          roundIndex: row.roundIndex,
          sequenceIndex: row.sequenceIndex,
          toolCallId,
          toolName,
          reason,
          ...(invalidatedBy === undefined ? {} : { invalidatedBy }),
        });

      if (visibility === 'per_run' && status === 'failed') omit('run_failed');
      else if (visibility === 'per_run' && status === 'running') omit('run_incomplete');
      else if (!hasCall) omit('orphan_result');
      else if (!hasResult) omit('orphan_call');
      else if (late({ row, hasCall }) || (row.roundIndex === lastRound && !lastRoundSent)) omit('trailing_unsent');
      // What was recorded decides, and so does today's policy: either one withholding the payload skips it.
      else if (row.persist !== 'full' || persistMode(policy, toolName) !== 'full') omit('policy_skipped');
      else {
        const windowSeconds = freshnessWindowSeconds(policy, request.channel, toolName, request.freshnessWindowSeconds);
        const expired = asOf - at(row.completedAt) > windowSeconds * 1000;
        // A later mutation outranks the clock: it is why the result is out of date, whatever its age.
        const mutation = invalidated.get(row);
        const invalidatedBy = mutation === undefined ? undefined : replayedId(mutation);
        if ((expired || mutation) && staleResultMode(policy, request.channel, toolName, request.staleResults) === 'drop') {
          if (mutation) omit('invalidated', invalidatedBy);
          else omit('stale');
          continue;
        }
        const calls = kept.get(row.roundIndex) ?? [];
        const args = row.arguments ?? {};
        const notice = mutation
          ? invalidatedResultNotice(toolName, mutation.toolName ?? '', invalidatedBy!)
          : expired
            ? expiredResultNotice(toolName, windowSeconds)
            : undefined;
        // Counted when recorded; rows recorded before counts were kept are counted here.
        const callCost = row.callTokens ?? callTokens(tokens, toolName, args);
        const resultCost = notice !== undefined ? tokens(notice) : (row.resultTokens ?? resultTokens(tokens, row.result));
        calls.push({
          toolCallId,
          toolName,
          arguments: args,
          result: notice ?? resultText(row.result),
          isError: notice !== undefined ? false : row.isError === true,
          sequenceIndex: row.sequenceIndex,
          requestedAt: row.requestedAt!,
          completedAt: row.completedAt!,
          expired,
          ...(invalidatedBy === undefined ? {} : { invalidatedBy }),
          tokens: callCost + resultCost,
        });
        kept.set(row.roundIndex, calls);
      }
    }

    if (kept.size === 0) continue;
    const rounds = [...kept.entries()].sort(([a], [b]) => a - b).map(([roundIndex, calls]) => ({ roundIndex, calls }));
    drafts.push({ runId: run.runId, assistantMessageId: status === 'completed' ? run.assistantMessageId : null, status, rounds });
  }

  // Over the budget, whole rounds leave oldest first, so what stays is still a valid history.
  const fitted = fitTokenBudget<ReplayedRound, TurnDraft>(drafts, historyTokenBudget(policy, request.channel, request.maxHistoryTokens));
  for (const { turn, round } of fitted.dropped)
    for (const call of round.calls)
      omitted.push({
        runId: turn.runId,
        roundIndex: round.roundIndex,
        sequenceIndex: call.sequenceIndex,
        toolCallId: call.toolCallId,
        toolName: call.toolName,
        reason: 'token_budget',
      });
  const turns = fitted.turns.map((turn) => ({
    ...turn,
    messages: request.format === 'anthropic_messages' ? toAnthropicMessages(turn.rounds) : toOpenAiChatMessages(turn.rounds),
  }));
  return { turns, omitted, historyTokens: fitted.tokens };
}
