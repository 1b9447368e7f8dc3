import fc from 'fast-check';
import {
  aiSdkCallOptions,
  aiSdkReasoningParts,
  providerOfAiSdkMetadataKey,
  providerOfAiSdkModel,
  reasoningOfAiSdkParts,
} from './ai-sdk-reasoning';
import type { JsonObject } from './tool-event-types';

/** The parts a step holds of these reasoning parts (what the SDK gives back is what it was sent: providerOptions as providerMetadata). */
const asStepParts = (parts: ReturnType<typeof aiSdkReasoningParts>) =>
  parts.map((part) => ({ text: part.text, providerMetadata: part.providerOptions }));

describe('the AI SDK reasoning parts of each provider', () => {
  it.each<[provider: string, items: JsonObject[], parts: ReturnType<typeof aiSdkReasoningParts>]>([
    [
      'anthropic',
      [
        { type: 'thinking', thinking: 'Check the order.', signature: 'EqQBCkgIARAB' },
        { type: 'redacted_thinking', data: 'EmwKAhgBEgy3' },
      ],
      [
        { type: 'reasoning', text: 'Check the order.', providerOptions: { anthropic: { signature: 'EqQBCkgIARAB' } } },
        { type: 'reasoning', text: '', providerOptions: { anthropic: { redactedData: 'EmwKAhgBEgy3' } } },
      ],
    ],
    [
      'openai',
      [
        {
          type: 'reasoning',
          id: 'rs_1',
          summary: [
            { type: 'summary_text', text: 'Look it up.' },
            { type: 'summary_text', text: 'Then refund.' },
          ],
          encrypted_content: 'gAAAAABo',
        },
        { type: 'reasoning', id: 'rs_2', summary: [] },
      ],
      [
        { type: 'reasoning', text: 'Look it up.', providerOptions: { openai: { itemId: 'rs_1', reasoningEncryptedContent: 'gAAAAABo' } } },
        { type: 'reasoning', text: 'Then refund.', providerOptions: { openai: { itemId: 'rs_1', reasoningEncryptedContent: 'gAAAAABo' } } },
        { type: 'reasoning', text: '', providerOptions: { openai: { itemId: 'rs_2', reasoningEncryptedContent: null } } },
      ],
    ],
    [
      'google',
      [
        { text: 'The order first.', thought: true },
        { text: 'Signed.', thought: true, thoughtSignature: 'CiQB0e2K' },
      ],
      [
        { type: 'reasoning', text: 'The order first.' },
        { type: 'reasoning', text: 'Signed.', providerOptions: { google: { thoughtSignature: 'CiQB0e2K' } } },
      ],
    ],
    [
      'bedrock',
      [
        { reasoningContent: { reasoningText: { text: 'The order first.', signature: 'EqQBCkgI' } } },
        { reasoningContent: { redactedContent: 'EmwKAhgB' } },
      ],
      [
        { type: 'reasoning', text: 'The order first.', providerOptions: { bedrock: { signature: 'EqQBCkgI' } } },
        { type: 'reasoning', text: '', providerOptions: { bedrock: { redactedData: 'EmwKAhgB' } } },
      ],
    ],
  ])('%s: its items are these parts, and back', (provider, items, parts) => {
    expect(aiSdkReasoningParts(provider, items)).toEqual(parts);
    const back = reasoningOfAiSdkParts(provider, asStepParts(parts), []).items;
    expect(JSON.stringify(back)).toBe(JSON.stringify(items));
  });

  it('Gemini through Google Vertex: its items are the parts under the `vertex` key @ai-sdk/google-vertex reads, and back', () => {
    const items: JsonObject[] = [
      { text: 'The order first.', thought: true },
      { text: 'Signed.', thought: true, thoughtSignature: 'CiQB0e2K' },
    ];
    const parts = aiSdkReasoningParts('google', items, 'google.vertex.chat');
    expect(parts).toEqual([
      { type: 'reasoning', text: 'The order first.' },
      { type: 'reasoning', text: 'Signed.', providerOptions: { vertex: { thoughtSignature: 'CiQB0e2K' } } },
    ]);
    expect(JSON.stringify(reasoningOfAiSdkParts('google', asStepParts(parts), []).items)).toBe(JSON.stringify(items));
    // Another provider id of Google's own API, or none, keeps the provider's key.
    expect(aiSdkReasoningParts('google', items, 'google.generative-ai')).toEqual(aiSdkReasoningParts('google', items));
  });

  it('gives no parts for a provider the SDK keeps no reasoning of, nor for an item its provider would not read', () => {
    expect(aiSdkReasoningParts('mistral', [{ type: 'thinking', thinking: 'x', signature: 's' }])).toEqual([]);
    expect(aiSdkReasoningParts('anthropic', [{ type: 'reasoning', id: 'rs_1', summary: [] }])).toEqual([]);
  });

  it.each<[provider: string, state: { signature?: string; itemId?: string }, options: unknown]>([
    ['google', { signature: 'CiQB' }, { google: { thoughtSignature: 'CiQB' } }],
    ['openai', { itemId: 'fc_1' }, { openai: { itemId: 'fc_1' } }],
    ['anthropic', { signature: 'CiQB', itemId: 'fc_1' }, undefined],
    ['google', {}, undefined],
    ['mistral', { signature: 'CiQB' }, undefined],
  ])('%s: a call with %j carries the options %j', (provider, state, options) => {
    expect(aiSdkCallOptions(provider, state)).toEqual(options);
  });

  it.each<[providerId: string | undefined, options: unknown]>([
    ['google.vertex.chat', { vertex: { thoughtSignature: 'CiQB' } }],
    ['google.generative-ai', { google: { thoughtSignature: 'CiQB' } }],
    [undefined, { google: { thoughtSignature: 'CiQB' } }],
  ])('a Gemini call signed for the model of provider id %s carries the options %j', (providerId, options) => {
    expect(aiSdkCallOptions('google', { signature: 'CiQB' }, providerId)).toEqual(options);
  });

  it('reads what a step put on its calls: signatures and item ids by call id, only its own provider', () => {
    const calls = [
      { toolCallId: 'call_a', providerMetadata: { google: { thoughtSignature: 'sig_a' } } },
      { toolCallId: 'call_b', providerMetadata: { openai: { itemId: 'fc_b' } } },
      { toolCallId: 'call_c' },
    ];
    expect(reasoningOfAiSdkParts('google', [], calls)).toEqual({ items: [], callSignatures: { call_a: 'sig_a' }, callItemIds: {} });
    expect(reasoningOfAiSdkParts('openai', [], calls)).toEqual({ items: [], callSignatures: {}, callItemIds: { call_b: 'fc_b' } });
  });

  it("reads Google Vertex's calls (@ai-sdk/google-vertex puts Gemini's signature under `vertex`) as Gemini's", () => {
    const calls = [{ toolCallId: 'call_a', providerMetadata: { vertex: { thoughtSignature: 'sig_a' } } }, { toolCallId: 'call_b' }];
    expect(reasoningOfAiSdkParts('google', [], calls)).toEqual({ items: [], callSignatures: { call_a: 'sig_a' }, callItemIds: {} });
  });

  it.each([
    ['anthropic', 'anthropic'],
    ['google', 'google'],
    ['vertex', 'google'],
    ['openai', 'openai'],
    ['bedrock', 'bedrock'],
    ['mistral', undefined],
  ])('providerMetadata under %s is the reasoning of %s', (key, provider) => {
    expect(providerOfAiSdkMetadataKey(key)).toBe(provider);
  });

  it.each([
    ['anthropic.messages', 'anthropic'],
    ['google.generative-ai', 'google'],
    ['google.vertex.chat', 'google'],
    ['openai.responses', 'openai'],
    ['amazon-bedrock', 'bedrock'],
    ['mock-provider', undefined],
  ])('the model of provider id %s records through %s', (id, provider) => {
    expect(providerOfAiSdkModel(id)).toBe(provider);
  });

  // The items each provider hands back, in the shapes its API gives them (key order included).
  const text = fc.string({ maxLength: 12 });
  const opaque = fc.base64String({ minLength: 4, maxLength: 24 });
  const ITEMS: Record<string, fc.Arbitrary<JsonObject[]>> = {
    anthropic: fc.array(
      fc.oneof(
        fc.record({ type: fc.constant('thinking'), thinking: text, signature: opaque }),
        fc.record({ type: fc.constant('redacted_thinking'), data: opaque }),
      ),
      { maxLength: 4 },
    ),
    openai: fc
      .uniqueArray(
        fc.tuple(
          fc.stringMatching(/^rs_[a-z0-9]{1,8}$/),
          fc.array(fc.string({ minLength: 1, maxLength: 8 }), { maxLength: 3 }),
          fc.option(opaque, { nil: undefined }),
        ),
        {
          selector: ([id]) => id,
          maxLength: 3,
        },
      )
      .map((items) =>
        items.map(([id, summaries, encrypted]) => ({
          type: 'reasoning',
          id,
          summary: summaries.map((s) => ({ type: 'summary_text', text: s })),
          ...(encrypted === undefined ? {} : { encrypted_content: encrypted }),
        })),
      ),
    google: fc.array(
      fc
        .tuple(text, fc.option(opaque, { nil: undefined }))
        .map(([t, sig]) => ({ text: t, thought: true, ...(sig === undefined ? {} : { thoughtSignature: sig }) })),
      { maxLength: 4 },
    ),
    bedrock: fc.array(
      fc.oneof(
        fc.record({ reasoningContent: fc.record({ reasoningText: fc.record({ text, signature: opaque }) }) }),
        fc.record({ reasoningContent: fc.record({ redactedContent: opaque }) }),
      ),
      { maxLength: 4 },
    ),
  };

  it.each(Object.keys(ITEMS))('%s: any items it hands back come back from the SDK parts byte for byte', (provider) => {
    fc.assert(
      fc.property(ITEMS[provider], (items) => {
        const back = reasoningOfAiSdkParts(provider, asStepParts(aiSdkReasoningParts(provider, items)), []).items;
        expect(JSON.stringify(back)).toBe(JSON.stringify(items));
      }),
    );
  });
});
