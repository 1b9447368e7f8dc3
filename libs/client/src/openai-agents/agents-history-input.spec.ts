import { Agent, type AgentInputItem, protocol, run, user } from '@openai/agents';
import { ScriptedModel } from '@openai/agents/testing';
import { historyInput, type ResponsesReplayItem, toAgentInputItems } from './agents-history-input';
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
    expect(items.map((item) => `${item.type}:${item.callId}`)).toEqual([
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
      /item 0 is not an OpenAI Responses function_call or function_call_output item .*replay the history in the openai-responses format/,
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
