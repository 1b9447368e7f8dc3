import { Agent, type AgentInputItem, protocol, run, user } from '@openai/agents';
import { ScriptedModel } from '@openai/agents/testing';
import fc from 'fast-check';
import type { JsonObject } from '../tool-event-types';
import { historyInput, type ResponsesReplayItem, toAgentInputItems } from './agents-history-input';
import { responseReasoningOf } from './agents-run-mapper';
import { ALL_TOOLS, assistantMessage, response } from './scripted-agents.fixture';

/** One round of two calls as the service replays it in the OpenAI Responses format. */
const ROUND: ResponsesReplayItem[] = [
  { type: 'function_call', call_id: 'call_paris', name: 'get_weather', arguments: '{"city":"Paris"}' },
  { type: 'function_call', call_id: 'call_oslo', name: 'search_flights', arguments: '{"to":"Oslo"}' },
  { type: 'function_call_output', call_id: 'call_paris', output: '{"city":"Paris","tempC":18}' },
  { type: 'function_call_output', call_id: 'call_oslo', output: '[error] no route to Oslo' },
];

describe('toAgentInputItems', () => {
  it('gives the SDK its own function_call and function_call_result items, each output named by its call', () => {
    expect(toAgentInputItems(ROUND)).toEqual([
      { type: 'function_call', callId: 'call_paris', name: 'get_weather', arguments: '{"city":"Paris"}', status: 'completed' },
      { type: 'function_call', callId: 'call_oslo', name: 'search_flights', arguments: '{"to":"Oslo"}', status: 'completed' },
      {
        type: 'function_call_result',
        callId: 'call_paris',
        name: 'get_weather',
        status: 'completed',
        output: { type: 'text', text: '{"city":"Paris","tempC":18}' },
      },
      {
        type: 'function_call_result',
        callId: 'call_oslo',
        name: 'search_flights',
        status: 'completed',
        output: { type: 'text', text: '[error] no route to Oslo' },
      },
    ]);
  });

  it('makes items the SDK’s own protocol schema accepts as they are', () => {
    for (const item of toAgentInputItems(ROUND)) expect(protocol.ModelItem.parse(item)).toEqual(item);
  });

  it('takes every turn of a replay, in order, parsed or as the response carries them', () => {
    const items = toAgentInputItems({
      turns: [
        { assistantMessageId: 'msg_a1', messages: ROUND },
        { assistantMessageId: '', messagesJson: JSON.stringify(ROUND.slice(0, 1).concat(ROUND[2])) },
        { assistantMessageId: 'msg_a3', messagesJson: '' },
      ],
    });
    expect(items.map((item) => `${item.type}:${(item as { callId?: string }).callId}`)).toEqual([
      'function_call:call_paris',
      'function_call:call_oslo',
      'function_call_result:call_paris',
      'function_call_result:call_oslo',
      'function_call:call_paris',
      'function_call_result:call_paris',
    ]);
  });

  it('refuses what is not the Responses format, such as chat-completions messages', () => {
    expect(() => toAgentInputItems([{ role: 'tool', tool_call_id: 'call_1', content: 'x' }])).toThrow(
      /item 0 is not an OpenAI Responses reasoning, assistant message, function_call or function_call_output item .*replay the history in the openai-responses format/,
    );
  });
});

describe('toAgentInputItems with reasoning', () => {
  /** A round of a reasoning model as replayed to it: its reasoning item, its text, then its call (with its fc_ id) and output. */
  const REASONING_ROUND: ResponsesReplayItem[] = [
    {
      type: 'reasoning',
      id: 'rs_68a1f0c2d4e81',
      summary: [{ type: 'summary_text', text: 'Look the order up first.' }],
      encrypted_content: 'gAAAAABoofDC',
    },
    { type: 'message', role: 'assistant', content: 'I will check the order.' },
    { type: 'function_call', id: 'fc_68a1f0c2d4e90', call_id: 'call_order', name: 'get_weather', arguments: '{"city":"Paris"}' },
    { type: 'function_call_output', call_id: 'call_order', output: '{"tempC":18}' },
  ];

  it('gives the SDK its reasoning item (encrypted content in its providerData), the text as its assistant message, the call with its item id', () => {
    const items = toAgentInputItems(REASONING_ROUND);
    expect(items.slice(0, 3)).toEqual([
      {
        type: 'reasoning',
        id: 'rs_68a1f0c2d4e81',
        content: [{ type: 'input_text', text: 'Look the order up first.' }],
        providerData: { encrypted_content: 'gAAAAABoofDC' },
      },
      { type: 'message', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: 'I will check the order.' }] },
      {
        type: 'function_call',
        id: 'fc_68a1f0c2d4e90',
        callId: 'call_order',
        name: 'get_weather',
        arguments: '{"city":"Paris"}',
        status: 'completed',
      },
    ]);
    for (const item of items) expect(protocol.ModelItem.parse(item)).toEqual(item);
  });

  it('is what the SDK sends the model next: the reasoning item right before its call, as the model produced it', async () => {
    const model = new ScriptedModel([response([assistantMessage('Paris is 18°C.')], [60, 5])]);
    const agent = new Agent({ name: 'travel', instructions: 'Help with travel.', model, tools: ALL_TOOLS });
    await run(agent, [user('Weather in Paris?'), ...toAgentInputItems(REASONING_ROUND)]);
    const sent = model.calls[0].request.input as AgentInputItem[];
    expect(sent.map((item) => item.type)).toEqual(['message', 'reasoning', 'message', 'function_call', 'function_call_result']);
    expect(sent[1]).toMatchObject({ id: 'rs_68a1f0c2d4e81', providerData: { encrypted_content: 'gAAAAABoofDC' } });
    expect(sent[3]).toMatchObject({ id: 'fc_68a1f0c2d4e90', callId: 'call_order' });
  });

  it('gives back, through the SDK item, any reasoning item the recorder took from it, byte for byte', () => {
    const reasoningItem = fc
      .tuple(
        fc.stringMatching(/^rs_[a-z0-9]{1,8}$/),
        fc.array(fc.string({ maxLength: 10 }), { maxLength: 3 }),
        fc.option(fc.base64String({ maxLength: 16 }), { nil: undefined }),
      )
      .map(([id, summaries, encrypted]) => ({
        type: 'reasoning' as const,
        id,
        summary: summaries.map((text) => ({ type: 'summary_text' as const, text })),
        ...(encrypted === undefined ? {} : { encrypted_content: encrypted }),
      }));
    fc.assert(
      fc.property(fc.array(reasoningItem, { minLength: 1, maxLength: 3 }), (items) => {
        const call = { type: 'function_call' as const, id: 'fc_1', call_id: 'call_1', name: 'get_weather', arguments: '{}' };
        const output = toAgentInputItems([...items, call]);
        const recorded = responseReasoningOf(response(output as Parameters<typeof response>[0], [1, 1]));
        expect(JSON.stringify(recorded?.reasoning.items)).toBe(JSON.stringify(items as JsonObject[]));
        expect(recorded?.reasoning.callItemIds).toEqual({ call_1: 'fc_1' });
      }),
    );
  });
});

describe('historyInput', () => {
  const host: AgentInputItem[] = [
    { type: 'message', role: 'user', content: 'Weather in Paris, flights to Oslo?', id: 'msg_u1' },
    {
      type: 'message',
      role: 'assistant',
      status: 'completed',
      content: [{ type: 'output_text', text: 'Paris 18°C; no flights.' }],
      id: 'msg_a1',
    },
    { type: 'message', role: 'user', content: 'And tomorrow?', id: 'msg_u2' },
  ];

  it('puts each turn’s items right before the host’s final answer of the run, a failed run’s after its user message', () => {
    const input = historyInput(
      {
        turns: [
          { assistantMessageId: 'msg_a1', messages: ROUND },
          // As the GetReplayHistory response carries it, unparsed.
          {
            assistantMessageId: '',
            afterMessageId: 'msg_u2',
            messagesJson: JSON.stringify([
              { type: 'function_call', call_id: 'call_t', name: 'get_weather', arguments: '{"city":"Paris"}' },
              { type: 'function_call_output', call_id: 'call_t', output: '{"tempC":16}' },
            ]),
          },
          // Its answer is gone from the host's items: so is its tool segment.
          { assistantMessageId: 'msg_gone', messages: ROUND },
        ],
      },
      host,
    );
    const named = (item: AgentInputItem) =>
      'role' in item ? `${item.role}:${item.id}` : `${item.type}:${(item as { callId: string }).callId}`;
    expect(input.map(named)).toEqual([
      'user:msg_u1',
      'function_call:call_paris',
      'function_call:call_oslo',
      'function_call_result:call_paris',
      'function_call_result:call_oslo',
      'assistant:msg_a1',
      'user:msg_u2',
      'function_call:call_t',
      'function_call_result:call_t',
    ]);
  });

  it('takes the host’s ids from idOf', () => {
    const kept = [{ key: 'a1', item: host[1] }];
    const input = historyInput({ turns: [{ assistantMessageId: 'a1', messages: ROUND.slice(0, 1).concat(ROUND[2]) }] }, kept, (k) => k.key);
    expect(input.map((i) => ('key' in i ? i.key : i.type))).toEqual(['function_call', 'function_call_result', 'a1']);
  });

  it('is input the SDK takes: the model is sent the replayed calls and outputs', async () => {
    const model = new ScriptedModel([response([assistantMessage('Paris was 18°C.')], [60, 5])]);
    const agent = new Agent({ name: 'travel', instructions: 'Help with travel.', model, tools: ALL_TOOLS });
    const input = [
      ...historyInput({ turns: [{ assistantMessageId: 'msg_a1', messages: ROUND }] }, host.slice(0, 2)),
      user('How warm was Paris?'),
    ];
    const result = await run(agent, input);
    expect(result.finalOutput).toBe('Paris was 18°C.');
    const sent = model.calls[0].request.input as AgentInputItem[];
    expect(sent.map((item) => item.type ?? 'message')).toEqual([
      'message',
      'function_call',
      'function_call',
      'function_call_result',
      'function_call_result',
      'message',
      'message',
    ]);
    expect(sent[4]).toMatchObject({
      callId: 'call_oslo',
      name: 'search_flights',
      output: { type: 'text', text: '[error] no route to Oslo' },
    });
  });
});
