/**
 * A kept call as replayed: its result (or the verdict's notice in its
 * place), transformed by the result rules in order, and what it takes in
 * the model's context.
 */
import type { JsonValue } from '@toolhistory/contract';
import { callTokens, resultText, resultTokens, type TokenCounter } from '../projection/invocation-tokens';
import { callCitations, compactCitedItems } from './citation-compaction';
import type { KeptCall } from './judged-calls';
import { resultWrapping } from './history-format-translators';
import type { HistoryFormat } from './provider-messages';
import type { RunAsOf } from './replay-call-context';
import type { ReplayedCall } from './replay-types';
import { citationRule, type ReplayPolicy } from './replay-policy';

/** A kept call's recorded result as a rule sees it: the value, and how many of its items were left out so far. */
export interface ReplayedResult {
  result: JsonValue | undefined;
  compactedItems: number;
}

export interface ResultContext {
  policy: ReplayPolicy;
  /** The runs started by asOf, by id: whose answer a result fed. */
  runs: ReadonlyMap<string, RunAsOf>;
}

/** Changes what a kept call replays as its recorded result (never a notice). A new transformation is a new entry in RESULT_RULES. */
export type ResultRule = (kept: KeptCall, result: ReplayedResult, context: ResultContext) => ReplayedResult;

/**
 * Citation compaction (citation-compaction.ts): a result its tool's
 * `citations` rule names keeps only the items the answer it fed cites.
 */
export const citedItemsOnly: ResultRule = ({ call }, replayed, { policy, runs }) => {
  const citations = callCitations(call, citationRule(policy, call.toolName), runs);
  if (citations === undefined || replayed.result === undefined) return replayed;
  const compacted = compactCitedItems(replayed.result, citations.rule, citations.citedSources);
  return { result: compacted.result, compactedItems: replayed.compactedItems + compacted.compactedItems };
};

/** In order; each sees what the one before left. */
export const RESULT_RULES: readonly ResultRule[] = Object.freeze([citedItemsOnly]);

export interface ReplayingOptions extends ResultContext {
  format: HistoryFormat;
  tokens: TokenCounter;
}

/** A kept call as replayed in the requested format, with its tokens (the format's wrapping of the result included). */
export function replayedCallOf(kept: KeptCall, options: ReplayingOptions, rules: readonly ResultRule[] = RESULT_RULES): ReplayedCall {
  const { call, verdict } = kept;
  const { row, toolName } = call;
  const args = row.arguments ?? {};
  const notice = verdict.kind === 'notice' ? verdict : undefined;
  const recorded: ReplayedResult = { result: row.result, compactedItems: 0 };
  const { result, compactedItems } = notice === undefined ? rules.reduce((r, rule) => rule(kept, r, options), recorded) : recorded;
  // Counted when recorded; rows recorded before counts were kept are counted here. A compacted result is counted as replayed.
  const callCost = row.callTokens ?? callTokens(options.tokens, toolName, args);
  const resultCost =
    notice !== undefined
      ? options.tokens(notice.notice)
      : compactedItems > 0
        ? resultTokens(options.tokens, result)
        : (row.resultTokens ?? resultTokens(options.tokens, result));
  const replayed: ReplayedCall = {
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
    compactedItems,
  };
  return withFormatTokens(replayed, options);
}

/** The tokens are of what the format sends: its wrapping of the result text counts too. */
function withFormatTokens(call: ReplayedCall, { format, tokens }: ReplayingOptions): ReplayedCall {
  const wrapping = resultWrapping(format, call);
  return wrapping === '' ? call : { ...call, tokens: call.tokens + tokens(wrapping) };
}
