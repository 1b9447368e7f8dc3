/**
 * What each replayed round carries of the model's response in it
 * (ModelResponseReceived, docs/adr/027-reasoning-state.md): its text, and
 * its reasoning state when the reasoning rules let it through. Reasoning is
 * opaque and signed: it goes back only to the provider (and, when the
 * request names one, the model) it came from, while it still rests.
 */

import type { RecordedResponse } from '../ports/replay-reader.port';
import type { HistoryFormat } from './provider-messages';
import { reasoningKeep, type ReplayPolicy } from './replay-policy';
import { translatorOf } from './history-format-translators';
import type { TurnDraft } from './replay-placement';
import type { PendingApproval, ReasoningOmission, ReplayedResponse, ReplayedRound } from './replay-types';

export type { ReasoningOmission, ReplayedResponse } from './replay-types';

export interface ResponseRequest {
  format: HistoryFormat;
  channel: string;
  /** The provider the host is about to call, for a format that names none. */
  provider?: string;
  /** The model the host is about to call: reasoning of another model stays out. */
  model?: string;
}

interface ReasoningFacts {
  response: RecordedResponse;
  target: string | null;
  model?: string;
  /** The rule of the round's tools, channel and defaults today. */
  keep: ReturnType<typeof reasoningKeep>;
}

/** One rule per reason, in precedence order: the first that answers stands; none answers: the reasoning is replayed. */
export const REASONING_RULES: ReadonlyArray<(facts: ReasoningFacts) => ReasoningOmission | undefined> = Object.freeze([
  ({ target }) => (target === null ? 'format_has_none' : undefined),
  ({ response, target }) => (response.provider !== target ? 'other_provider' : undefined),
  ({ response, model }) => (model !== undefined && model !== '' && model !== response.model ? 'other_model' : undefined),
  ({ keep }) => (keep === 'never' ? 'policy_never' : undefined),
  ({ response }) => (response.state === null ? 'expired' : undefined),
]);

type ResponseContext = { policy: ReplayPolicy; inOpenTurn: (runId: string) => boolean };

/** What a round takes from its response: the response as it may be replayed, and Gemini's placeholder. */
type RoundResponse = Pick<ReplayedRound, 'response' | 'reasoningPlaceholder'>;

/**
 * Each round of the drafts with the model's response for the round it was
 * made in (its origin run's, for a resumed round), when one was recorded.
 * In a Gemini replay, a round of a turn still going at asOf (`inOpenTurn`)
 * whose calls carry no signature gets the placeholder: Gemini refuses a
 * function call of the current turn without one.
 */
export function withResponses(
  drafts: readonly TurnDraft[],
  responses: readonly RecordedResponse[],
  request: ResponseRequest,
  context: ResponseContext,
): TurnDraft[] {
  const recordedOf = recordedResponses(responses);
  return drafts.map((turn) => ({
    ...turn,
    rounds: turn.rounds.map((round) => {
      const origin = round.resumedFromRunId ?? turn.runId;
      const tools = round.calls.map((c) => c.toolName);
      const response = roundResponseOf(recordedOf(origin, round.roundIndex), origin, tools, request, context);
      return response.response === undefined && response.reasoningPlaceholder === undefined ? round : { ...round, ...response };
    }),
  }));
}

/**
 * Each call awaiting approval with the response of the round it was made
 * in, as a replay of that round carries it, when that round is not in the
 * turns (all its calls wait): a host that rebuilds the request awaiting
 * approval from the list then gives the model its round back as it made it
 * (Claude with thinking refuses a tool_use without its thinking first).
 */
export function pendingWithResponses(
  pending: readonly PendingApproval[],
  turns: readonly TurnDraft[],
  responses: readonly RecordedResponse[],
  request: ResponseRequest,
  context: ResponseContext,
): PendingApproval[] {
  const replayed = new Map<string, Set<number>>();
  for (const turn of turns)
    for (const round of turn.rounds) {
      const origin = round.resumedFromRunId ?? turn.runId;
      replayed.set(origin, (replayed.get(origin) ?? new Set<number>()).add(round.roundIndex));
    }
  const recordedOf = recordedResponses(responses);
  return pending.map((approval) => {
    const { runId, roundIndex } = approval;
    if (replayed.get(runId)?.has(roundIndex)) return approval;
    const tools = pending.filter((p) => p.runId === runId && p.roundIndex === roundIndex).map((p) => p.toolName);
    const round = roundResponseOf(recordedOf(runId, roundIndex), runId, tools, request, context);
    return round.response === undefined && round.reasoningPlaceholder === undefined
      ? approval
      : { ...approval, round: { roundIndex, ...round } };
  });
}

const GOOGLE_PROVIDER = 'google';

/** The provider the replay is for: the format's own, else the one the request names (a format any provider's messages fit). */
function targetProviderOf(request: ResponseRequest): string | null {
  return translatorOf(request.format).provider ?? request.provider ?? null;
}

function recordedResponses(responses: readonly RecordedResponse[]): (runId: string, roundIndex: number) => RecordedResponse | undefined {
  const byRun = new Map<string, Map<number, RecordedResponse>>();
  for (const r of responses) byRun.set(r.runId, (byRun.get(r.runId) ?? new Map<number, RecordedResponse>()).set(r.roundIndex, r));
  return (runId, roundIndex) => byRun.get(runId)?.get(roundIndex);
}

function roundResponseOf(
  recorded: RecordedResponse | undefined,
  origin: string,
  tools: readonly string[],
  request: ResponseRequest,
  context: ResponseContext,
): RoundResponse {
  const response = recorded === undefined ? undefined : replayedResponseOf(recorded, request, { ...context, tools });
  const signed = response?.callSignatures !== undefined && Object.keys(response.callSignatures).length > 0;
  // Gemini refuses a call of the current turn without a signature: Google's stand-in goes on a round that has none.
  const reasoningPlaceholder = targetProviderOf(request) === GOOGLE_PROVIDER && context.inOpenTurn(origin) && !signed;
  return { ...(response === undefined ? {} : { response }), ...(reasoningPlaceholder ? { reasoningPlaceholder } : {}) };
}

function replayedResponseOf(
  recorded: RecordedResponse,
  request: ResponseRequest,
  context: { policy: ReplayPolicy; tools: readonly string[] },
): ReplayedResponse {
  const target = targetProviderOf(request);
  const keep = reasoningKeep(context.policy, request.channel, context.tools);
  const omitted =
    recorded.reasoningBytes === 0
      ? 'none'
      : (REASONING_RULES.map((rule) => rule({ response: recorded, target, model: request.model, keep })).find((o) => o !== undefined) ??
        'none');
  const state = recorded.reasoningBytes > 0 && omitted === 'none' ? recorded.state : null;
  const text = recorded.text ?? undefined;
  return {
    provider: recorded.provider,
    model: recorded.model,
    ...(text === undefined ? {} : { text }),
    ...(state?.reasoning === undefined ? {} : { reasoning: state.reasoning }),
    ...(state?.callSignatures === undefined ? {} : { callSignatures: state.callSignatures }),
    ...(state?.callItemIds === undefined ? {} : { callItemIds: state.callItemIds }),
    reasoningOmitted: omitted,
    // Both counted once when recorded: a long conversation's replay does not count them again.
    tokens: recorded.textTokens + (state === null ? 0 : recorded.reasoningTokens),
  };
}
