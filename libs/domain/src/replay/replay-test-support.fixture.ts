import type { ToolEvent } from '@toolhistory/contract';
import { conversationKeyString, invocationKeyString, responseKeyString, runKeyString } from '../projection/read-model-keys';
import { InMemoryReasoning } from '../reasoning/in-memory-reasoning.fixture';
import { setReasoningApart } from '../reasoning/reasoning-apart';
import { reasoningRulesOf } from '../reasoning/reasoning-rules';
import { NOT_YET_APPROVED_OR_RESUMED, projectEvents, ReadModelState } from '../projection/evolve-read-model';
import type { InvocationRow } from '../projection/read-model.types';
import { replayHistory, ReplayRequest } from './replay-history';
import { parseReplayPolicy } from './parse-replay-policy';
import { DEFAULT_REPLAY_POLICY, ReplayPolicy } from './replay-policy';
import { testTokens } from '../projection/test-tokens.fixture';

/**
 * The read model a list of events produces, in one batch or cut into
 * several, as the recorder writes it: each response's reasoning state set
 * apart and kept as `reasoning` (default: the default policy's rules) says.
 */
export function readModelOf(
  events: readonly ToolEvent[],
  cuts: readonly number[] = [],
  reasoning = reasoningRulesOf(DEFAULT_REPLAY_POLICY),
) {
  let state: ReadModelState = { conversations: new Map(), runs: new Map(), invocations: new Map(), responses: new Map() };
  const kept = new InMemoryReasoning();
  const bounds = [0, ...[...cuts].filter((c) => c > 0 && c < events.length).sort((a, b) => a - b), events.length];
  for (let i = 0; i < bounds.length - 1; i += 1) {
    const apart = setReasoningApart(events.slice(bounds[i], bounds[i + 1]), reasoning, testTokens);
    kept.apply(apart.steps);
    const changes = projectEvents(state, apart.events as ToolEvent[], testTokens);
    state = { ...state, conversations: new Map(state.conversations), runs: new Map(state.runs), invocations: new Map(state.invocations) };
    for (const r of changes.conversations) state.conversations.set(conversationKeyString(r), r);
    for (const r of changes.runs) state.runs.set(runKeyString(r), r);
    for (const r of changes.invocations) state.invocations.set(invocationKeyString(r), r);
    for (const r of changes.responses) state.responses!.set(responseKeyString(r), r);
  }
  return {
    runs: [...state.runs.values()],
    invocations: [...state.invocations.values()],
    responses: kept.recorded(state.responses!.values()),
  };
}

/** The moment the rule tests' traces are placed after, and their conversation. */
export const T0 = Date.parse('2026-03-01T12:00:00.000Z');
export const iso = (seconds: number) => new Date(T0 + seconds * 1000).toISOString();
export const inRun = (runId: string) => ({ tenantId: 'acme', conversationId: 'c1', channel: 'web', runId });

/** A policy document that must be valid. */
export function policyOf(document: unknown): ReplayPolicy {
  const parsed = parseReplayPolicy(document);
  if (!parsed.ok) throw new Error(parsed.problems.join('; '));
  return parsed.policy;
}

/** The history of a trace, as of T0 + 60 s in OpenAI format unless `request` says otherwise (test tokens), recorded in batches cut at `cuts`. */
export function replayOf(
  events: readonly ToolEvent[],
  request: Partial<ReplayRequest> = {},
  policy: ReplayPolicy = DEFAULT_REPLAY_POLICY,
  cuts: readonly number[] = [],
) {
  const { runs, invocations, responses } = readModelOf(events, cuts, reasoningRulesOf(policy));
  return replayHistory(
    { tenantId: 'acme', conversationId: 'c1', channel: 'web', asOf: T0 + 60_000, format: 'openai_chat', ...request },
    runs,
    invocations,
    policy,
    testTokens,
    responses,
  );
}

/** One answered get_order call of run r1, as the read model holds it; the rule tables override what they vary. */
export function answeredRow(fields: Partial<InvocationRow> = {}): InvocationRow {
  return {
    tenantId: 'acme',
    conversationId: 'c1',
    runId: 'r1',
    pairKey: 'k0',
    roundIndex: 0,
    sequenceIndex: 0,
    toolCallId: 'call_get',
    toolName: 'get_order',
    arguments: { orderId: 'A-1' },
    result: 'shipped',
    isError: false,
    requestedAt: iso(0),
    completedAt: iso(1),
    callEventId: 'e-call',
    resultEventId: 'e-result',
    callAfterRunEnd: false,
    persist: 'full',
    producerRedacted: false,
    argumentRedactions: {},
    resultRedactions: {},
    argumentsBytes: null,
    resultBytes: null,
    callTokens: null,
    resultTokens: null,
    ...NOT_YET_APPROVED_OR_RESUMED,
    ...fields,
  };
}

export * from './format-problems.fixture';
