/**
 * What each provider's API requires of a replayed history, as checks that
 * return the problems they find (none: the API accepts it): every call
 * answered right after it, the same ids and names, and a round's response
 * (its reasoning and text) where that API wants it. The property tests and
 * the vendor-type conformance run them on every replay.
 */
import type { ProviderMessage } from './provider-messages';
import type { HistoryFormat } from './replay-history';

/** A message's parts in order, one letter each (r: reasoning, t: text, u: a tool use), as the API allows them. */
const RESPONSE_THEN_CALLS = /^r*t?u+$/;

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

/**
 * Anthropic: an assistant message whose thinking blocks come first, then
 * its text, then its tool_use blocks; then one user message whose
 * tool_result blocks answer them all, in order.
 */
export function anthropicProblems(messages: readonly ProviderMessage[]): string[] {
  const problems: string[] = [];
  if (messages.length % 2 !== 0) problems.push('odd number of messages');
  const kindOf = (type: string) => ({ thinking: 'r', redacted_thinking: 'r', text: 't', tool_use: 'u' })[type] ?? '?';
  for (let i = 0; i < messages.length; i += 2) {
    const ask = messages[i] as { role: string; content: Array<{ type: string; id?: string }> };
    const answer = messages[i + 1] as { role: string; content: Array<{ type: string; tool_use_id?: string }> } | undefined;
    if (ask.role !== 'assistant' || !RESPONSE_THEN_CALLS.test(ask.content.map((b) => kindOf(b.type)).join('')))
      problems.push(`message ${i}: not an assistant message of thinking, then text, then tool_use blocks`);
    if (!answer || answer.role !== 'user' || answer.content.some((b) => b.type !== 'tool_result')) {
      problems.push(`message ${i + 1}: not a user tool_result message`);
      continue;
    }
    const asked = ask.content.filter((b) => b.type === 'tool_use').map((b) => b.id);
    const answered = answer.content.map((b) => b.tool_use_id);
    if (JSON.stringify(asked) !== JSON.stringify(answered)) problems.push(`message ${i + 1}: answers ${answered} for ${asked}`);
    if (asked.some((id) => !id || !/^[a-zA-Z0-9_-]+$/.test(id))) problems.push(`message ${i}: invalid tool_use id`);
    if (new Set(asked).size !== asked.length) problems.push(`message ${i}: repeated tool_use id`);
  }
  return problems;
}

/**
 * OpenAI Responses: each function_call item answered by exactly one later
 * function_call_output of the same call_id, nothing else answered. A
 * round's reasoning items and its text come right before its function_call
 * items; a function_call carries its `fc_` item id only in a round whose
 * reasoning items came before it (without them the API refuses the id).
 */
export function responsesProblems(items: readonly ProviderMessage[]): string[] {
  const problems: string[] = [];
  const open = new Set<string>();
  const answered = new Set<string>();
  /** Where the round is: before its calls (reasoning and text), in its calls, or in its outputs. */
  let stage: 'response' | 'calls' | 'outputs' = 'outputs';
  let withReasoning = false;
  items.forEach((raw, i) => {
    const item = raw as { type?: string; call_id?: string; id?: unknown; arguments?: string; output?: unknown; role?: string };
    if (item.type === 'reasoning' || item.type === 'message') {
      if (stage === 'calls') problems.push(`item ${i}: ${item.type} among a round's function calls`);
      if (stage !== 'response') withReasoning = false;
      if (item.type === 'reasoning') withReasoning = true;
      else if (item.role !== 'assistant') problems.push(`item ${i}: a ${item.role} message inside the replayed rounds`);
      stage = 'response';
      return;
    }
    if (!item.call_id) problems.push(`item ${i}: empty call_id`);
    if (item.type === 'function_call') {
      if (stage === 'outputs') withReasoning = false;
      stage = 'calls';
      if ('id' in item && !withReasoning) problems.push(`item ${i}: carries an item id without its reasoning item`);
      if ('id' in item && (typeof item.id !== 'string' || !item.id.startsWith('fc')))
        problems.push(`item ${i}: item id ${String(item.id)}`);
      if (open.has(item.call_id!) || answered.has(item.call_id!)) problems.push(`item ${i}: repeated call_id ${item.call_id}`);
      open.add(item.call_id!);
      try {
        JSON.parse(item.arguments ?? '');
      } catch {
        problems.push(`item ${i}: arguments are not JSON`);
      }
    } else if (item.type === 'function_call_output') {
      stage = 'outputs';
      if ('id' in item) problems.push(`item ${i}: an output carries an item id`);
      if (!open.delete(item.call_id!)) problems.push(`item ${i}: output for ${item.call_id}, which no open call has`);
      answered.add(item.call_id!);
      if (typeof item.output !== 'string') problems.push(`item ${i}: output is not text`);
    } else problems.push(`item ${i}: type ${item.type}`);
  });
  for (const id of open) problems.push(`call ${id} never answered`);
  return problems;
}

/**
 * Gemini: a model content of its thought parts, then its text, then its
 * functionCall parts (only a functionCall part carries a thoughtSignature
 * beside its call); then a user content of functionResponse parts with the
 * same ids and names, in order.
 */
export function geminiProblems(contents: readonly ProviderMessage[]): string[] {
  const problems: string[] = [];
  if (contents.length % 2 !== 0) problems.push('odd number of contents');
  type ModelPart = { functionCall?: { id: string; name: string }; thought?: boolean; text?: string };
  const kindOf = (p: ModelPart) => (p.functionCall ? 'u' : p.thought === true ? 'r' : typeof p.text === 'string' ? 't' : '?');
  for (let i = 0; i < contents.length; i += 2) {
    const ask = contents[i] as { role: string; parts: ModelPart[] };
    const answer = contents[i + 1] as
      { role: string; parts: Array<{ functionResponse?: { id: string; name: string; response: unknown } }> } | undefined;
    if (ask.role !== 'model' || !RESPONSE_THEN_CALLS.test(ask.parts.map(kindOf).join('')))
      problems.push(`content ${i}: not a model content of thoughts, then text, then functionCall parts`);
    if (!answer || answer.role !== 'user' || answer.parts.some((p) => !p.functionResponse)) {
      problems.push(`content ${i + 1}: not a user content of functionResponse parts`);
      continue;
    }
    const calls = ask.parts.filter((p) => p.functionCall);
    const asked = calls.map((p) => [p.functionCall?.id, p.functionCall?.name]);
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

/**
 * Bedrock Converse: an assistant message of its reasoningContent blocks,
 * then its text, then its toolUse blocks; then one user message whose
 * toolResult blocks answer them all, ids valid.
 */
export function bedrockProblems(messages: readonly ProviderMessage[]): string[] {
  const problems: string[] = [];
  if (messages.length % 2 !== 0) problems.push('odd number of messages');
  type Block = { toolUse?: { toolUseId: string }; reasoningContent?: unknown; text?: string };
  const kindOf = (b: Block) => (b.toolUse ? 'u' : b.reasoningContent ? 'r' : typeof b.text === 'string' ? 't' : '?');
  for (let i = 0; i < messages.length; i += 2) {
    const ask = messages[i] as { role: string; content: Block[] };
    const answer = messages[i + 1] as
      { role: string; content: Array<{ toolResult?: { toolUseId: string; content: unknown[]; status: string } }> } | undefined;
    if (ask.role !== 'assistant' || !RESPONSE_THEN_CALLS.test(ask.content.map(kindOf).join('')))
      problems.push(`message ${i}: not an assistant message of reasoning, then text, then toolUse blocks`);
    if (!answer || answer.role !== 'user' || answer.content.some((b) => !b.toolResult)) {
      problems.push(`message ${i + 1}: not a user toolResult message`);
      continue;
    }
    const asked = ask.content.filter((b) => b.toolUse).map((b) => b.toolUse?.toolUseId);
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
