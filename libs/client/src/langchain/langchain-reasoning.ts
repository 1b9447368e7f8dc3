import { AIMessage, type AIMessageFields, type BaseMessage } from '@langchain/core/messages';
import { GEMINI_PLACEHOLDER_SIGNATURE } from '../../../domain/src/replay/provider-messages';
import type { ResponseReasoning } from '../recording/recorded-run';
import type { JsonObject } from '../tool-event-types';

/**
 * Where LangChain's chat model integrations keep a reasoning model's state
 * on an AIMessage, and back: Anthropic's `thinking` and `redacted_thinking`
 * blocks (signatures in them) among the message's content blocks, which
 * @langchain/anthropic sends back as they are; OpenAI's reasoning item in
 * `additional_kwargs.reasoning` and the function calls' item ids in
 * `additional_kwargs.__openai_function_call_ids__`, which @langchain/openai
 * (Responses API) sends back before the calls; Gemini's thought parts as
 * `thinking` blocks (signature in them) and each call's thought signature
 * in `additional_kwargs.__gemini_function_call_thought_signatures__`, which
 * @langchain/google-genai keeps and sends back. Each is recorded as the
 * provider's own item, so a replay in the provider's format carries it too.
 * A model with `outputVersion: "v1"` gives LangChain's standard blocks
 * instead (Anthropic's thinking as `reasoning` blocks, redacted thinking as
 * `non_standard`; OpenAI's stay in `additional_kwargs`): they are read back
 * into Anthropic's first, so a round records the same either way.
 */

/** @langchain/openai's key of the function calls' item ids (tool call id to fc_...). */
export const OPENAI_FUNCTION_CALL_IDS = '__openai_function_call_ids__';
/** @langchain/google-genai's key of the function calls' thought signatures (tool call id to signature). */
export const GEMINI_FUNCTION_CALL_SIGNATURES = '__gemini_function_call_thought_signatures__';
// Google's documented signature for a function call whose own is unknown (a replay marks such a round): the domain's.
export { GEMINI_PLACEHOLDER_SIGNATURE };

const ANTHROPIC_BLOCKS = new Set(['thinking', 'redacted_thinking']);

/**
 * The reasoning state an AIMessage carries with its tool calls, as its
 * provider's own items; undefined when it has none, or when no model is
 * named (the message's response metadata, else `calledModel`).
 */
export function messageReasoningOf(message: BaseMessage | undefined, calledModel?: string): ResponseReasoning | undefined {
  if (message === undefined || !AIMessage.isInstance(message)) return undefined;
  const metadata = message.response_metadata as { model_name?: unknown; model?: unknown } | undefined;
  const model = [metadata?.model_name, metadata?.model, calledModel].find((m): m is string => typeof m === 'string' && m !== '');
  if (model === undefined) return undefined;
  // @langchain/google-genai names the signatures of every output with calls (an empty map when there are none).
  if (isObject(message.additional_kwargs?.[GEMINI_FUNCTION_CALL_SIGNATURES])) return geminiReasoningOf(message, model);
  const thinking = providerBlocksOf(message).filter((block) => ANTHROPIC_BLOCKS.has(String(block.type)));
  if (thinking.length > 0) return { provider: 'anthropic', model, items: thinking.map(anthropicBlockOf) };
  const kwargs = message.additional_kwargs ?? {};
  const reasoning = kwargs.reasoning as { type?: unknown } | undefined;
  const items = isObject(reasoning) && reasoning.type === 'reasoning' ? [JSON.parse(JSON.stringify(reasoning)) as JsonObject] : [];
  const callItemIds = textsByCall(kwargs[OPENAI_FUNCTION_CALL_IDS], () => true);
  return responseReasoning('openai', model, items, { callItemIds });
}

/** Gemini's thought parts as thinking blocks, and the signatures of the message's own calls. */
function geminiReasoningOf(message: AIMessage, model: string): ResponseReasoning | undefined {
  const blocks = Array.isArray(message.content) ? (message.content as Array<Record<string, unknown>>) : [];
  const items = blocks.filter((block) => block.type === 'thinking').map(geminiThoughtOf);
  const calls = new Set((message.tool_calls ?? []).map((call) => call.id));
  const callSignatures = textsByCall(message.additional_kwargs[GEMINI_FUNCTION_CALL_SIGNATURES], (callId) => calls.has(callId));
  return responseReasoning('google', model, items, { callSignatures });
}

/** A kwargs map of tool call id to text (item ids, signatures): its non-empty texts of the calls `keep` names. */
function textsByCall(value: unknown, keep: (callId: string) => boolean): Record<string, string> {
  if (!isObject(value)) return {};
  return Object.fromEntries(
    Object.entries(value).filter((entry): entry is [string, string] => keep(entry[0]) && typeof entry[1] === 'string' && entry[1] !== ''),
  );
}

/** The reasoning a round carries, empty parts left out; none when it carries nothing. */
function responseReasoning(
  provider: string,
  model: string,
  items: JsonObject[],
  byCall: Pick<ResponseReasoning, 'callSignatures' | 'callItemIds'>,
): ResponseReasoning | undefined {
  const maps = Object.entries(byCall).filter(([, map]) => map !== undefined && Object.keys(map).length > 0);
  if (items.length === 0 && maps.length === 0) return undefined;
  return { provider, model, ...(items.length === 0 ? {} : { items }), ...Object.fromEntries(maps) };
}

/** @langchain/google-genai's thinking block as the Gemini thought part it came from. */
function geminiThoughtOf(block: Record<string, unknown>): JsonObject {
  return {
    text: String(block.thinking ?? ''),
    thought: true,
    ...(typeof block.signature === 'string' ? { thoughtSignature: block.signature } : {}),
  };
}

/** The fields of a replayed round's AIMessage that carry its text and, for its provider, its reasoning. */
export function reasoningMessageFields(round: {
  provider: string;
  text: string;
  reasoningJson: string;
  callItemIds: Record<string, string>;
  callSignatures?: Record<string, string>;
  reasoningPlaceholder?: boolean;
  calls?: ReadonlyArray<{ toolCallId: string }>;
}): Pick<AIMessageFields, 'content' | 'additional_kwargs'> {
  const items = round.reasoningJson ? (JSON.parse(round.reasoningJson) as JsonObject[]) : [];
  const text = round.text ?? '';
  if (round.provider === 'google') return geminiMessageFields(round, items, text);
  if (round.provider === 'anthropic' && items.length > 0) {
    return { content: [...items, ...(text === '' ? [] : [{ type: 'text', text }])] as AIMessageFields['content'] };
  }
  if (round.provider === 'openai') {
    const ids = round.callItemIds ?? {};
    const kwargs = {
      // @langchain/openai keeps one reasoning item per message.
      ...(items.length === 0 ? {} : { reasoning: items.at(-1) }),
      ...(Object.keys(ids).length === 0 ? {} : { [OPENAI_FUNCTION_CALL_IDS]: { ...ids } }),
    };
    return Object.keys(kwargs).length === 0 ? { content: text } : { content: text, additional_kwargs: kwargs };
  }
  return { content: text };
}

/**
 * A Gemini round where @langchain/google-genai reads it: its thought parts
 * as thinking blocks first, then the text; the calls' signatures by tool
 * call id, Google's placeholder on the first call when the replay marks the
 * round (a turn that goes on without the call's own signature).
 */
function geminiMessageFields(
  round: { callSignatures?: Record<string, string>; reasoningPlaceholder?: boolean; calls?: ReadonlyArray<{ toolCallId: string }> },
  items: readonly JsonObject[],
  text: string,
): Pick<AIMessageFields, 'content' | 'additional_kwargs'> {
  const signatures: Record<string, string> = { ...(round.callSignatures ?? {}) };
  const first = round.calls?.[0]?.toolCallId;
  if (round.reasoningPlaceholder && first !== undefined) signatures[first] ??= GEMINI_PLACEHOLDER_SIGNATURE;
  const thinking = items.map((part) => ({
    type: 'thinking',
    thinking: String(part.text ?? ''),
    ...(typeof part.thoughtSignature === 'string' ? { signature: part.thoughtSignature } : {}),
  }));
  const content =
    thinking.length === 0 ? text : ([...thinking, ...(text === '' ? [] : [{ type: 'text', text }])] as AIMessageFields['content']);
  return Object.keys(signatures).length === 0
    ? { content }
    : { content, additional_kwargs: { [GEMINI_FUNCTION_CALL_SIGNATURES]: signatures } };
}

/** The message's content blocks as its provider gave them: LangChain's standard blocks (output_version "v1") of an Anthropic model read back into Anthropic's. */
function providerBlocksOf(message: AIMessage): Array<Record<string, unknown>> {
  const blocks = Array.isArray(message.content) ? (message.content as Array<Record<string, unknown>>) : [];
  const metadata = message.response_metadata as { output_version?: unknown; model_provider?: unknown } | undefined;
  if (metadata?.output_version !== 'v1' || metadata.model_provider !== 'anthropic') return blocks;
  return blocks.map((block) => {
    if (block.type === 'non_standard' && isObject(block.value)) return block.value;
    if (block.type !== 'reasoning') return block;
    const { type: _type, reasoning, ...rest } = block;
    return { ...rest, type: 'thinking', thinking: reasoning };
  });
}

/** An Anthropic block as the API gives it: its own fields in their order (not what LangChain adds, such as a stream's index). */
function anthropicBlockOf(block: Record<string, unknown>): JsonObject {
  return block.type === 'redacted_thinking'
    ? { type: 'redacted_thinking', data: String(block.data) }
    : {
        type: 'thinking',
        thinking: String(block.thinking),
        ...(typeof block.signature === 'string' ? { signature: block.signature } : {}),
      };
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
