import type { ToolEvent } from '@toolhistory/contract';
import { conversationKeyString, invocationKeyString, responseKeyString, runKeyString } from '../projection/read-model-keys';
import { InMemoryReasoning } from '../reasoning/in-memory-reasoning.fixture';
import { setReasoningApart } from '../reasoning/reasoning-apart';
import { reasoningRulesOf } from '../reasoning/reasoning-rules';
import { NOT_YET_APPROVED_OR_RESUMED, projectEvents, ReadModelState } from '../projection/evolve-read-model';
import type { InvocationRow } from '../projection/read-model.types';
import type { ProviderMessage } from './provider-messages';
import { HistoryFormat, replayHistory, ReplayRequest } from './replay-history';
import { DEFAULT_REPLAY_POLICY, parseReplayPolicy, ReplayPolicy } from './replay-policy';
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
    const apart = setReasoningApart(events.slice(bounds[i], bounds[i + 1]), reasoning);
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

/** The history of a trace, as of T0 + 60 s in OpenAI format unless `request` says otherwise (test tokens). */
export function replayOf(events: readonly ToolEvent[], request: Partial<ReplayRequest> = {}, policy: ReplayPolicy = DEFAULT_REPLAY_POLICY) {
  const { runs, invocations, responses } = readModelOf(events, [], reasoningRulesOf(policy));
  return replayHistory(
    { tenantId: 'acme', conversationId: 'c1', channel: 'web', asOf: T0 + 60_000, format: 'openai_chat', ...request },
    runs,
    invocations,
    policy,
    testTokens,
    responses,
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

/**
 * OpenAI Responses: each function_call item answered by exactly one later
 * function_call_output of the same call_id, nothing else answered; no item
 * id (a replayed fc_ id without its reasoning item is refused).
 */
export function responsesProblems(items: readonly ProviderMessage[]): string[] {
  const problems: string[] = [];
  const open = new Set<string>();
  const answered = new Set<string>();
  items.forEach((raw, i) => {
    const item = raw as { type?: string; call_id?: string; id?: unknown; arguments?: string; output?: unknown };
    if ('id' in item) problems.push(`item ${i}: carries an item id`);
    if (!item.call_id) problems.push(`item ${i}: empty call_id`);
    if (item.type === 'function_call') {
      if (open.has(item.call_id!) || answered.has(item.call_id!)) problems.push(`item ${i}: repeated call_id ${item.call_id}`);
      open.add(item.call_id!);
      try {
        JSON.parse(item.arguments ?? '');
      } catch {
        problems.push(`item ${i}: arguments are not JSON`);
      }
    } else if (item.type === 'function_call_output') {
      if (!open.delete(item.call_id!)) problems.push(`item ${i}: output for ${item.call_id}, which no open call has`);
      answered.add(item.call_id!);
      if (typeof item.output !== 'string') problems.push(`item ${i}: output is not text`);
    } else problems.push(`item ${i}: type ${item.type}`);
  });
  for (const id of open) problems.push(`call ${id} never answered`);
  return problems;
}

/** Gemini: a model content of functionCall parts, then a user content of functionResponse parts with the same ids and names, in order. */
export function geminiProblems(contents: readonly ProviderMessage[]): string[] {
  const problems: string[] = [];
  if (contents.length % 2 !== 0) problems.push('odd number of contents');
  for (let i = 0; i < contents.length; i += 2) {
    const ask = contents[i] as { role: string; parts: Array<{ functionCall?: { id: string; name: string; args: unknown } }> };
    const answer = contents[i + 1] as
      { role: string; parts: Array<{ functionResponse?: { id: string; name: string; response: unknown } }> } | undefined;
    if (ask.role !== 'model' || ask.parts.length === 0 || ask.parts.some((p) => !p.functionCall))
      problems.push(`content ${i}: not a model content of functionCall parts`);
    if (!answer || answer.role !== 'user' || answer.parts.some((p) => !p.functionResponse)) {
      problems.push(`content ${i + 1}: not a user content of functionResponse parts`);
      continue;
    }
    const asked = ask.parts.map((p) => [p.functionCall?.id, p.functionCall?.name]);
    const given = answer.parts.map((p) => [p.functionResponse?.id, p.functionResponse?.name]);
    if (JSON.stringify(asked) !== JSON.stringify(given)) problems.push(`content ${i + 1}: answers ${given} for ${asked}`);
    for (const p of answer.parts) {
      const response = p.functionResponse?.response;
      if (typeof response !== 'object' || response === null || Array.isArray(response))
        problems.push(`content ${i + 1}: response is not an object`);
    }
    if (asked.some(([id]) => !id)) problems.push(`content ${i}: empty id`);
  }
  return problems;
}

/** Bedrock Converse: toolUse blocks, then one user message whose toolResult blocks answer them all, ids valid. */
export function bedrockProblems(messages: readonly ProviderMessage[]): string[] {
  const problems: string[] = [];
  if (messages.length % 2 !== 0) problems.push('odd number of messages');
  for (let i = 0; i < messages.length; i += 2) {
    const ask = messages[i] as { role: string; content: Array<{ toolUse?: { toolUseId: string } }> };
    const answer = messages[i + 1] as
      { role: string; content: Array<{ toolResult?: { toolUseId: string; content: unknown[]; status: string } }> } | undefined;
    if (ask.role !== 'assistant' || ask.content.length === 0 || ask.content.some((b) => !b.toolUse))
      problems.push(`message ${i}: not an assistant toolUse message`);
    if (!answer || answer.role !== 'user' || answer.content.some((b) => !b.toolResult)) {
      problems.push(`message ${i + 1}: not a user toolResult message`);
      continue;
    }
    const asked = ask.content.map((b) => b.toolUse?.toolUseId);
    const answered = answer.content.map((b) => b.toolResult?.toolUseId);
    if (JSON.stringify(asked) !== JSON.stringify(answered)) problems.push(`message ${i + 1}: answers ${answered} for ${asked}`);
    if (asked.some((id) => !id || !/^[a-zA-Z0-9_-]{1,64}$/.test(id))) problems.push(`message ${i}: invalid toolUseId`);
    if (new Set(asked).size !== asked.length) problems.push(`message ${i}: repeated toolUseId`);
    for (const b of answer.content) {
      if (b.toolResult?.content.length !== 1) problems.push(`message ${i + 1}: a toolResult without one content block`);
      if (!['success', 'error'].includes(b.toolResult?.status ?? '')) problems.push(`message ${i + 1}: status ${b.toolResult?.status}`);
    }
  }
  return problems;
}

/** The problems of a turn's messages by the rules of its format's API. */
export const FORMAT_PROBLEMS = {
  openai_chat: openAiProblems,
  anthropic_messages: anthropicProblems,
  openai_responses: responsesProblems,
  gemini: geminiProblems,
  bedrock_converse: bedrockProblems,
} as const satisfies Record<HistoryFormat, (messages: readonly ProviderMessage[]) => string[]>;
