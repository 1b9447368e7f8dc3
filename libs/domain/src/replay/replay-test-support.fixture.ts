import type { ToolEvent } from '@toolhistory/contract';
import { conversationKeyString, invocationKeyString, runKeyString } from '../projection/read-model-keys';
import { NOT_YET_APPROVED_OR_RESUMED, projectEvents, ReadModelState } from '../projection/evolve-read-model';
import type { InvocationRow } from '../projection/read-model.types';
import type { ProviderMessage } from './provider-messages';
import { replayHistory, ReplayRequest } from './replay-history';
import { DEFAULT_REPLAY_POLICY, parseReplayPolicy, ReplayPolicy } from './replay-policy';
import { testTokens } from '../projection/test-tokens.fixture';

/** The read model a list of events produces, in one batch or cut into several. */
export function readModelOf(events: readonly ToolEvent[], cuts: readonly number[] = []) {
  let state: ReadModelState = { conversations: new Map(), runs: new Map(), invocations: new Map() };
  const bounds = [0, ...[...cuts].filter((c) => c > 0 && c < events.length).sort((a, b) => a - b), events.length];
  for (let i = 0; i < bounds.length - 1; i += 1) {
    const changes = projectEvents(state, events.slice(bounds[i], bounds[i + 1]), testTokens);
    state = { conversations: new Map(state.conversations), runs: new Map(state.runs), invocations: new Map(state.invocations) };
    for (const r of changes.conversations) state.conversations.set(conversationKeyString(r), r);
    for (const r of changes.runs) state.runs.set(runKeyString(r), r);
    for (const r of changes.invocations) state.invocations.set(invocationKeyString(r), r);
  }
  return { runs: [...state.runs.values()], invocations: [...state.invocations.values()] };
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

/** The history of a trace, as of T0 + 60 s in OpenAI format unless `request` says otherwise (test tokens). */
export function replayOf(events: readonly ToolEvent[], request: Partial<ReplayRequest> = {}, policy: ReplayPolicy = DEFAULT_REPLAY_POLICY) {
  const { runs, invocations } = readModelOf(events);
  return replayHistory(
    { tenantId: 'acme', conversationId: 'c1', channel: 'web', asOf: T0 + 60_000, format: 'openai_chat', ...request },
    runs,
    invocations,
    policy,
    testTokens,
  );
}

/**
 * What the OpenAI chat API requires of tool messages: an assistant message
 * with tool_calls is followed, right after, by exactly one tool message per
 * call, in order; no tool message answers anything else. Returns the problems.
 */
export function openAiProblems(messages: readonly ProviderMessage[]): string[] {
  const problems: string[] = [];
  for (let i = 0; i < messages.length; i += 1) {
    const m = messages[i] as { role: string; tool_calls?: Array<{ id: string; function: { arguments: string } }>; tool_call_id?: string };
    if (m.role === 'assistant') {
      const calls = m.tool_calls ?? [];
      if (calls.length === 0) problems.push(`message ${i}: assistant message without tool_calls`);
      if (new Set(calls.map((c) => c.id)).size !== calls.length) problems.push(`message ${i}: repeated tool call id`);
      calls.forEach((call, k) => {
        const answer = messages[i + 1 + k] as { role?: string; tool_call_id?: string } | undefined;
        if (answer?.role !== 'tool' || answer.tool_call_id !== call.id)
          problems.push(`message ${i}: call ${call.id} not answered at ${i + 1 + k}`);
        if (call.id === '') problems.push(`message ${i}: empty tool call id`);
        try {
          JSON.parse(call.function.arguments);
        } catch {
          problems.push(`message ${i}: arguments of ${call.id} are not JSON`);
        }
      });
      i += calls.length;
    } else {
      problems.push(`message ${i}: ${m.role} message without a preceding assistant tool call`);
    }
  }
  return problems;
}

/** Anthropic: assistant tool_use blocks, then one user message whose tool_result blocks answer them all, in order. */
export function anthropicProblems(messages: readonly ProviderMessage[]): string[] {
  const problems: string[] = [];
  if (messages.length % 2 !== 0) problems.push('odd number of messages');
  for (let i = 0; i < messages.length; i += 2) {
    const ask = messages[i] as { role: string; content: Array<{ type: string; id?: string }> };
    const answer = messages[i + 1] as { role: string; content: Array<{ type: string; tool_use_id?: string }> } | undefined;
    if (ask.role !== 'assistant' || ask.content.some((b) => b.type !== 'tool_use'))
      problems.push(`message ${i}: not an assistant tool_use message`);
    if (!answer || answer.role !== 'user' || answer.content.some((b) => b.type !== 'tool_result')) {
      problems.push(`message ${i + 1}: not a user tool_result message`);
      continue;
    }
    const asked = ask.content.map((b) => b.id);
    const answered = answer.content.map((b) => b.tool_use_id);
    if (JSON.stringify(asked) !== JSON.stringify(answered)) problems.push(`message ${i + 1}: answers ${answered} for ${asked}`);
    if (asked.some((id) => !id || !/^[a-zA-Z0-9_-]+$/.test(id))) problems.push(`message ${i}: invalid tool_use id`);
    if (new Set(asked).size !== asked.length) problems.push(`message ${i}: repeated tool_use id`);
  }
  return problems;
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
