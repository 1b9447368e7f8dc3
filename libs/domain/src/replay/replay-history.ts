import type { InvocationRow, RunRow } from '../projection/read-model.types';
import type { Omission, ReplayedRound, ReplayHistory, ReplayRequest } from './replay-types';
import type { TokenCounter } from '../projection/invocation-tokens';
import { fitTokenBudget } from './token-budget';
import type { HistoryFormat, ProviderMessage } from './provider-messages';
import { translatorOf } from './history-format-translators';
import { callScopeOf, type RunAsOf, runsAsOf } from './replay-call-context';
import { turnOf } from '../reasoning/reasoning-apart';
import { historyTokenBudget, ReplayPolicy } from './replay-policy';
import { replayedToolCallId } from './replayed-tool-call-id';
import { isKept, judgeCalls, omissionsOf, pendingApprovalsOf } from './judged-calls';
import { replayedCallOf } from './replayed-call';
import { type TurnDraft, turnsOf } from './replay-placement';
import { pendingWithResponses, withResponses } from './round-responses';
import type { RecordedResponse } from '../ports/replay-reader.port';

export { deniedCallNotice, expiredResultNotice, INTERRUPTED_CALL_NOTICE, invalidatedResultNotice } from './replay-call-rules';

export type { HistoryFormat } from './provider-messages';

export type {
  Omission,
  OmissionReason,
  PendingApproval,
  ReplayedCall,
  ReplayedRound,
  ReplayedTurn,
  ReplayHistory,
  ReplayRequest,
} from './replay-types';

/**
 * The tool-call history a model may see again, per run, at `asOf`. Pure: the
 * same rows, policy and request always give the same bytes. Every call not
 * replayed is listed in `omitted` with its reason. The steps, each a list of
 * rules where a new reason or transformation is one more entry:
 * 1. judge each call on its own (CALL_RULES, replay-call-rules.ts);
 * 2. replay each kept call's result as the result rules make it (RESULT_RULES, replayed-call.ts: citation compaction);
 * 3. place each kept call in its turn and round (PLACEMENT_RULES, replay-placement.ts: resumed runs),
 *    each round with the model's response in it: text, and reasoning as REASONING_RULES allow (round-responses.ts);
 * 4. fit the whole to the token budget, whole rounds leaving oldest first (token-budget.ts);
 * 5. make each turn's provider messages; list what was left out and the calls waiting for a person.
 */
export function replayHistory(
  request: ReplayRequest,
  runs: readonly RunRow[],
  invocations: readonly InvocationRow[],
  policy: ReplayPolicy,
  tokens: TokenCounter,
  responses: readonly RecordedResponse[] = [],
): ReplayHistory {
  const scope = callScopeOf(request, invocations, policy, reportedIdIn(request.format));
  const judged = judgeCalls(runsAsOf(scope, runs, invocations));
  const replaying = { format: request.format, tokens, policy, runs: judged.runs };
  const placed = judged.calls.filter(isKept).map((kept) => ({ kept, replayed: replayedCallOf(kept, replaying) }));
  const inOpenTurn = openTurnsAsOf(judged.runs);
  const context = { policy, inOpenTurn };
  const drafts = withResponses(turnsOf(placed, judged.runs), responses, request, context);
  // Over the budget, whole rounds leave oldest first, so what stays is still a valid history.
  const budget = historyTokenBudget(policy, request.channel, request.maxHistoryTokens);
  const fitted = fitTokenBudget<ReplayedRound, TurnDraft>(drafts, budget);
  return {
    turns: fitted.turns.map((turn) => ({ ...turn, messages: messagesOf(turn.rounds, request.format) })),
    omitted: [...omissionsOf(judged), ...fitted.dropped.flatMap(overBudget)],
    pendingApprovals: pendingWithResponses(pendingApprovalsOf(judged), fitted.turns, responses, request, context),
    historyTokens: fitted.tokens,
  };
}

/** Whether a run's turn was still going at asOf: no run of it had completed with an answer (reasoning-apart.ts, turnOf). */
function openTurnsAsOf(runs: ReadonlyMap<string, RunAsOf>): (runId: string) => boolean {
  const turnOfRun = (run: RunAsOf) => turnOf({ userMessageId: run.run.userMessageId ?? undefined, runId: run.run.runId });
  const ended = new Set([...runs.values()].filter((r) => r.status === 'completed' && r.run.finishReason === 'stop').map(turnOfRun));
  return (runId) => {
    const run = runs.get(runId);
    return run !== undefined && !ended.has(turnOfRun(run));
  };
}

/** Ids are reported as the requested format carries them. */
function reportedIdIn(format: HistoryFormat): (row: InvocationRow) => string {
  const { toolCallIdOf } = translatorOf(format);
  return (row) => toolCallIdOf(replayedToolCallId(row.toolCallId, row));
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
