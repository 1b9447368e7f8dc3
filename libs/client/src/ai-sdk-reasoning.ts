import type { JsonObject, JsonValue } from './tool-event-types';

/**
 * The AI SDK's reasoning state and each provider's own items, both ways:
 * what the SDK hands back in a step (`reasoning` parts with
 * `providerMetadata`, a provider's metadata on `tool-call` parts) is
 * recorded as the provider's own items (an Anthropic thinking block, an
 * OpenAI reasoning item, a Gemini thought part, a Bedrock reasoningContent
 * block), so a replay in the provider's own format gives them back too; and
 * a replayed round's items become the SDK's `reasoning` parts with the
 * `providerOptions` its provider package reads when it builds the next
 * request. A provider not listed here keeps no reasoning through the SDK.
 */

/** A part's provider options (or metadata): per provider key, its fields. */
export type AiSdkProviderOptions = Record<string, Record<string, JsonValue>>;

/** The SDK's reasoning part of an assistant message (`ReasoningPart` of a `ModelMessage`). */
export interface AiSdkReasoningPart {
  type: 'reasoning';
  text: string;
  providerOptions?: AiSdkProviderOptions;
}

/** A reasoning part as a step gives it (its `providerMetadata`), or as a message carries it (its `providerOptions`). */
export interface AiSdkReasoningInput {
  text: string;
  providerMetadata?: Readonly<Record<string, unknown>>;
}

/** The SDK's parts of one provider's reasoning, and back. */
interface ProviderReasoning {
  /** The key of its providerMetadata / providerOptions. */
  key: string;
  /**
   * Keys another provider package of the same API uses instead, each a
   * segment of that package's provider id (Google Vertex's `vertex`, of
   * `google.vertex.chat`, for Gemini).
   */
  otherKeys?: readonly string[];
  /** Its items from the step's reasoning parts, in order. */
  items(parts: ReadonlyArray<{ text: string; metadata: Record<string, unknown> }>): JsonObject[];
  /** The SDK's reasoning parts of its items, in order, their options under `key`; an item it cannot read is left out. */
  parts(items: readonly JsonObject[], key: string): AiSdkReasoningPart[];
  /** On a tool call: the opaque signature it carries (Gemini's thoughtSignature). */
  callSignature?: string;
  /** On a tool call: the provider's own item id (OpenAI's fc_...). */
  callItemId?: string;
}

const text = (value: unknown): string | undefined => (typeof value === 'string' ? value : undefined);
const withOptions = (key: string, fields: Record<string, JsonValue>): Pick<AiSdkReasoningPart, 'providerOptions'> =>
  Object.keys(fields).length === 0 ? {} : { providerOptions: { [key]: fields } };
const defined = (fields: Record<string, JsonValue | undefined>): Record<string, JsonValue> =>
  Object.fromEntries(Object.entries(fields).filter(([, value]) => value !== undefined)) as Record<string, JsonValue>;

/** Anthropic: a `thinking` block with its signature, or a `redacted_thinking` block with its data. */
const anthropic: ProviderReasoning = {
  key: 'anthropic',
  items: (parts) =>
    parts.map(({ text: thinking, metadata }): JsonObject =>
      text(metadata.redactedData) !== undefined
        ? { type: 'redacted_thinking', data: text(metadata.redactedData)! }
        : { type: 'thinking', thinking, ...defined({ signature: text(metadata.signature) }) },
    ),
  parts: (items, key) =>
    items.flatMap((item): AiSdkReasoningPart[] => {
      if (item.type === 'thinking' && typeof item.thinking === 'string') {
        return [{ type: 'reasoning', text: item.thinking, ...withOptions(key, defined({ signature: text(item.signature) })) }];
      }
      if (item.type === 'redacted_thinking' && typeof item.data === 'string') {
        return [{ type: 'reasoning', text: '', providerOptions: { [key]: { redactedData: item.data } } }];
      }
      return [];
    }),
};

/**
 * OpenAI Responses: one `reasoning` item per item id; the SDK gives one part
 * per summary text (one with empty text when there is no summary), each with
 * the item's id and encrypted content.
 */
const openai: ProviderReasoning = {
  key: 'openai',
  callItemId: 'itemId',
  items: (parts) => {
    const items: JsonObject[] = [];
    const byId = new Map<string, { summary: JsonObject[]; encrypted?: string }>();
    for (const { text: summary, metadata } of parts) {
      const id = text(metadata.itemId);
      if (id === undefined) continue;
      let item = byId.get(id);
      if (item === undefined) {
        item = { summary: [] };
        byId.set(id, item);
        items.push({ type: 'reasoning', id });
      }
      if (summary !== '') item.summary.push({ type: 'summary_text', text: summary });
      item.encrypted = text(metadata.reasoningEncryptedContent) ?? item.encrypted;
    }
    return items.map((item) => {
      const { summary, encrypted } = byId.get(item.id as string)!;
      return { ...item, summary, ...defined({ encrypted_content: encrypted }) };
    });
  },
  parts: (items, key) =>
    items.flatMap((item): AiSdkReasoningPart[] => {
      if (item.type !== 'reasoning' || typeof item.id !== 'string') return [];
      const options = { [key]: { itemId: item.id, reasoningEncryptedContent: text(item.encrypted_content) ?? null } };
      const summaries = Array.isArray(item.summary)
        ? item.summary.flatMap((s) => (isObject(s) && typeof s.text === 'string' ? [s.text] : []))
        : [];
      return (summaries.length === 0 ? [''] : summaries).map((summary) => ({ type: 'reasoning', text: summary, providerOptions: options }));
    }),
};

/** Gemini: a thought part, with its signature when it has one; a step's signed function call carries its own. */
const google: ProviderReasoning = {
  key: 'google',
  otherKeys: ['vertex'],
  callSignature: 'thoughtSignature',
  items: (parts) =>
    parts.map(({ text: thought, metadata }) => ({
      text: thought,
      thought: true,
      ...defined({ thoughtSignature: text(metadata.thoughtSignature) }),
    })),
  parts: (items, key) =>
    items.flatMap((item): AiSdkReasoningPart[] =>
      item.thought === true && typeof item.text === 'string'
        ? [{ type: 'reasoning', text: item.text, ...withOptions(key, defined({ thoughtSignature: text(item.thoughtSignature) })) }]
        : [],
    ),
};

/** Bedrock Converse: a reasoningContent block, its text with its signature, or its redacted content. */
const bedrock: ProviderReasoning = {
  key: 'bedrock',
  items: (parts) =>
    parts.map(({ text: reasoning, metadata }): JsonObject =>
      text(metadata.redactedData) !== undefined
        ? { reasoningContent: { redactedContent: text(metadata.redactedData)! } }
        : { reasoningContent: { reasoningText: { text: reasoning, ...defined({ signature: text(metadata.signature) }) } } },
    ),
  parts: (items, key) =>
    items.flatMap((item): AiSdkReasoningPart[] => {
      const content = isObject(item.reasoningContent) ? item.reasoningContent : undefined;
      if (typeof content?.redactedContent === 'string') {
        return [{ type: 'reasoning', text: '', providerOptions: { [key]: { redactedData: content.redactedContent } } }];
      }
      const reasoning = isObject(content?.reasoningText) ? content.reasoningText : undefined;
      if (typeof reasoning?.text !== 'string') return [];
      return [{ type: 'reasoning', text: reasoning.text, ...withOptions(key, defined({ signature: text(reasoning.signature) })) }];
    }),
};

/** By the provider names the contract gives them. */
export const AI_SDK_REASONING: Readonly<Record<string, ProviderReasoning>> = Object.freeze({ anthropic, openai, google, bedrock });

/**
 * The provider name of an AI SDK provider id (`anthropic.messages`,
 * `google.generative-ai`, `google.vertex.chat`, `openai.responses`,
 * `amazon-bedrock`).
 */
export function providerOfAiSdkModel(providerId: string): string | undefined {
  const [head] = providerId.split('.');
  if (head === 'amazon-bedrock' || head === 'bedrock') return 'bedrock';
  return Object.hasOwn(AI_SDK_REASONING, head) ? head : undefined;
}

/** The provider whose reasoning a providerMetadata key holds (`vertex`: `google`), if the client knows it. */
export function providerOfAiSdkMetadataKey(key: string): string | undefined {
  return Object.entries(AI_SDK_REASONING).find(([, rules]) => rules.key === key || rules.otherKeys?.includes(key))?.[0];
}

/**
 * The providerOptions key `provider`'s reasoning goes under for the next
 * model call: the one its package of `providerId` reads (`google.vertex.chat`:
 * `vertex`), else the provider's own.
 */
function optionsKeyOf(rules: ProviderReasoning, providerId: string | undefined): string {
  const segments = providerId?.split('.') ?? [];
  return rules.otherKeys?.find((key) => segments.includes(key)) ?? rules.key;
}

export interface AiSdkCallState {
  toolCallId: string;
  providerMetadata?: Readonly<Record<string, unknown>>;
}

/** What a step's parts hold of `provider`'s reasoning: its items, and what it put on the calls. */
export function reasoningOfAiSdkParts(
  provider: string,
  reasoning: readonly AiSdkReasoningInput[],
  calls: readonly AiSdkCallState[],
): { items: JsonObject[]; callSignatures: Record<string, string>; callItemIds: Record<string, string> } {
  const rules = AI_SDK_REASONING[provider];
  const keys = [rules.key, ...(rules.otherKeys ?? [])];
  const metadataOf = (metadata: Readonly<Record<string, unknown>> | undefined) => {
    const own = keys.map((key) => metadata?.[key]).find(isObject);
    return own ?? {};
  };
  const onCalls = (field: string | undefined) =>
    field === undefined
      ? {}
      : Object.fromEntries(
          calls.flatMap((call) => {
            const value = text(metadataOf(call.providerMetadata)[field]);
            return value === undefined ? [] : [[call.toolCallId, value]];
          }),
        );
  return {
    items: rules.items(reasoning.map((part) => ({ text: part.text, metadata: metadataOf(part.providerMetadata) }))),
    callSignatures: onCalls(rules.callSignature),
    callItemIds: onCalls(rules.callItemId),
  };
}

/**
 * The SDK's reasoning parts of a replayed round's items, for its provider
 * (none for a provider the SDK keeps no reasoning of), with their options
 * under the key the package of `providerId` reads (the model's `provider`).
 */
export function aiSdkReasoningParts(provider: string, items: readonly JsonObject[], providerId?: string): AiSdkReasoningPart[] {
  if (!Object.hasOwn(AI_SDK_REASONING, provider)) return [];
  const rules = AI_SDK_REASONING[provider];
  return rules.parts(items, optionsKeyOf(rules, providerId));
}

/** A tool-call part's provider options for what the provider put on the call (a signature, an item id); undefined when none. */
export function aiSdkCallOptions(
  provider: string,
  state: { signature?: string; itemId?: string },
  providerId?: string,
): AiSdkProviderOptions | undefined {
  if (!Object.hasOwn(AI_SDK_REASONING, provider)) return undefined;
  const rules = AI_SDK_REASONING[provider];
  const { callSignature, callItemId } = rules;
  const key = optionsKeyOf(rules, providerId);
  const fields = defined({
    ...(callSignature === undefined ? {} : { [callSignature]: state.signature }),
    ...(callItemId === undefined ? {} : { [callItemId]: state.itemId }),
  });
  return Object.keys(fields).length === 0 ? undefined : { [key]: fields };
}

function isObject(value: unknown): value is Record<string, JsonValue> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
