import { AIMessage, type AIMessageFields, HumanMessage } from '@langchain/core/messages';
// The repo's moduleResolution ("node") does not read package exports: the types come from the file the export names.
import type * as Prebuilt from '@langchain/langgraph/dist/prebuilt/index.js';
import fc from 'fast-check';
import { Round } from '../generated/toolhistory/v1/toolhistory';
import type { JsonObject } from '../tool-event-types';
import { toLangChainMessages } from './langchain-message-converter';
import { messageReasoningOf, OPENAI_FUNCTION_CALL_IDS, reasoningMessageFields } from './langchain-reasoning';
import { call, recordingRun, ScriptedChatModel, tools, usage } from './scripted-chat-model.fixture';
import { ToolHistoryCallbackHandler } from './tool-history-callback-handler';

const { createReactAgent } = jest.requireActual<typeof Prebuilt>('@langchain/langgraph/prebuilt');

const thinking = { type: 'thinking', thinking: 'Look the order up first.', signature: 'EqQBCkgIARAB' };
const redacted = { type: 'redacted_thinking', data: 'EmwKAhgBEgy3' };
const openAiReasoning = {
  type: 'reasoning',
  id: 'rs_1',
  summary: [{ type: 'summary_text', text: 'Look it up.' }],
  encrypted_content: 'gAAAAABo',
};

const opaque = fc.base64String({ minLength: 4, maxLength: 16 });
/** Any Anthropic reasoning of one round: thinking blocks with their signatures, redacted thinking. */
const anthropicItems = fc.array(
  fc.oneof(
    fc.record({ type: fc.constant('thinking'), thinking: fc.string({ maxLength: 12 }), signature: opaque }),
    fc.record({ type: fc.constant('redacted_thinking'), data: opaque }),
  ),
  { minLength: 1, maxLength: 4 },
);

describe('messageReasoningOf', () => {
  it.each<[string, AIMessage, unknown]>([
    [
      "Anthropic's thinking blocks, as the API gives them (not LangChain's stream index)",
      new AIMessage({
        content: [{ ...thinking, index: 0 }, redacted, { type: 'text', text: 'Checking.' }],
        response_metadata: { model: 'claude-sonnet-4-5' },
      }),
      { provider: 'anthropic', model: 'claude-sonnet-4-5', items: [thinking, redacted] },
    ],
    [
      "OpenAI's reasoning item and its calls' fc_ ids (@langchain/openai, Responses API)",
      new AIMessage({
        content: '',
        additional_kwargs: { reasoning: openAiReasoning, [OPENAI_FUNCTION_CALL_IDS]: { call_a: 'fc_a' } },
        response_metadata: { model_name: 'gpt-5' },
      }),
      { provider: 'openai', model: 'gpt-5', items: [openAiReasoning], callItemIds: { call_a: 'fc_a' } },
    ],
    ['nothing for a message without reasoning state', new AIMessage({ content: 'hi', response_metadata: { model: 'm' } }), undefined],
    ['nothing when no model is named', new AIMessage({ content: [thinking] }), undefined],
  ])('%s', (_, message, expected) => {
    expect(messageReasoningOf(message)).toEqual(expected);
  });

  it('names the called model when the message does not', () => {
    expect(messageReasoningOf(new AIMessage({ content: [thinking] }), 'claude-opus-4-1')?.model).toBe('claude-opus-4-1');
  });
});

describe('the replayed round, as LangChain messages', () => {
  const roundOf = (fields: Partial<Round>) =>
    Round.fromPartial({
      roundIndex: 0,
      calls: [{ toolCallId: 'call_a', toolName: 'get_order', argumentsJson: '{"orderId":"A-1"}', result: 'shipped' }],
      ...fields,
    });

  it("gives Anthropic its thinking blocks first in the round's message content, then the text; the calls as tool_calls", () => {
    const [message] = toLangChainMessages({
      turns: [
        {
          assistantMessageId: '',
          rounds: [roundOf({ provider: 'anthropic', text: 'Checking.', reasoningJson: JSON.stringify([thinking, redacted]) })],
        },
      ],
    });
    expect(message.content).toEqual([thinking, redacted, { type: 'text', text: 'Checking.' }]);
    expect((message as AIMessage).tool_calls?.map((c) => c.id)).toEqual(['call_a']);
  });

  it('gives OpenAI its reasoning item and item ids where @langchain/openai reads them; the text alone to a round without reasoning', () => {
    const round = roundOf({
      provider: 'openai',
      text: 'Checking.',
      reasoningJson: JSON.stringify([openAiReasoning]),
      callItemIds: { call_a: 'fc_a' },
    });
    expect(reasoningMessageFields(round)).toEqual({
      content: 'Checking.',
      additional_kwargs: { reasoning: openAiReasoning, [OPENAI_FUNCTION_CALL_IDS]: { call_a: 'fc_a' } },
    });
    expect(reasoningMessageFields(roundOf({ provider: 'anthropic', text: 'Checking.' }))).toEqual({ content: 'Checking.' });
  });

  it('records again, byte for byte, the Anthropic blocks it gave back, with any text', () => {
    fc.assert(
      fc.property(anthropicItems, fc.string({ maxLength: 8 }), (items, text) => {
        const fields = reasoningMessageFields(roundOf({ provider: 'anthropic', text, reasoningJson: JSON.stringify(items) }));
        const again = messageReasoningOf(new AIMessage({ ...fields, response_metadata: { model: 'claude' } }));
        expect(JSON.stringify(again?.items)).toBe(JSON.stringify(items as JsonObject[]));
      }),
    );
  });
});

describe('ToolHistoryCallbackHandler with a reasoning model', () => {
  /** What the handler publishes of a one-round agent run whose model answers `reply`, then ends. */
  const recordedResponses = async (reply: AIMessageFields, outputVersion?: 'v0' | 'v1') => {
    const { events, run } = recordingRun();
    const llm = new ScriptedChatModel([reply, { content: 'Done.' }], { outputVersion });
    const handler = new ToolHistoryCallbackHandler(run);
    await createReactAgent({ llm, tools }).invoke({ messages: [new HumanMessage('Where is A-1?')] }, { callbacks: [handler] });
    await handler.settled();
    const produced = llm.received[1].find((m) => AIMessage.isInstance(m));
    return { responses: events.filter((e) => e.type === 'ModelResponseReceived'), produced };
  };

  it.each<[string, AIMessageFields]>([
    [
      'Anthropic (thinking as reasoning blocks, redacted thinking as non_standard)',
      {
        content: [thinking, redacted, { type: 'text', text: 'Checking.' }],
        tool_calls: [call('call_a', 'get_order', { orderId: 'A-1' })],
        response_metadata: { model_provider: 'anthropic', model_name: 'claude-sonnet-4-5' },
      },
    ],
    [
      'OpenAI (the reasoning item and fc_ ids stay in additional_kwargs)',
      {
        content: 'Checking.',
        tool_calls: [call('call_a', 'get_order', { orderId: 'A-1' })],
        additional_kwargs: { reasoning: openAiReasoning, [OPENAI_FUNCTION_CALL_IDS]: { call_a: 'fc_a' } },
        response_metadata: { model_provider: 'openai', model_name: 'gpt-5' },
      },
    ],
  ])("records a model's round the same with LangChain's standard blocks (outputVersion v1): %s", async (_, reply) => {
    const standard = await recordedResponses(reply, 'v1');
    expect((standard.produced?.response_metadata as { output_version?: string }).output_version).toBe('v1');
    const provider = await recordedResponses(reply);
    expect(provider.responses).toHaveLength(1);
    expect(JSON.stringify(standard.responses)).toBe(JSON.stringify(provider.responses));
  });

  it('records any Anthropic thinking of a standard-block model byte for byte, as the API gave it', async () => {
    await fc.assert(
      fc.asyncProperty(anthropicItems, fc.string({ maxLength: 8 }), async (items, text) => {
        const { responses } = await recordedResponses(
          {
            content: [...items, ...(text === '' ? [] : [{ type: 'text', text }])],
            tool_calls: [call('call_a', 'get_order', { orderId: 'A-1' })],
            response_metadata: { model_provider: 'anthropic', model_name: 'claude-sonnet-4-5' },
          },
          'v1',
        );
        expect(JSON.stringify(responses[0].reasoning)).toBe(JSON.stringify(items));
      }),
      { numRuns: 30 },
    );
  });

  it("publishes the round's thinking and text (ModelResponseReceived) before its calls", async () => {
    const { events, run } = recordingRun();
    const llm = new ScriptedChatModel([
      {
        content: [thinking, { type: 'text', text: 'Checking the order.' }],
        tool_calls: [call('call_a', 'get_order', { orderId: 'A-1' })],
        usage_metadata: usage(10, 5),
        response_metadata: { model_name: 'claude-sonnet-4-5' },
      },
      { content: 'It has shipped.', usage_metadata: usage(20, 5) },
    ]);
    const handler = new ToolHistoryCallbackHandler(run);
    await createReactAgent({ llm, tools }).invoke({ messages: [new HumanMessage('Where is A-1?')] }, { callbacks: [handler] });
    await handler.settled();
    expect(events.map((e) => e.type)).toEqual(['ModelResponseReceived', 'ToolCallRequested', 'ToolResultReceived', 'RunCompleted']);
    expect(events[0]).toEqual({
      type: 'ModelResponseReceived',
      roundIndex: 0,
      provider: 'anthropic',
      model: 'claude-sonnet-4-5',
      text: 'Checking the order.',
      reasoning: [thinking],
    });
  });
});
