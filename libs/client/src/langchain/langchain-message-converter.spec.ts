import { AIMessage, HumanMessage, ToolMessage } from '@langchain/core/messages';
import { ApprovalStatus, Round } from '../generated/toolhistory/v1/toolhistory';
import type { OpenAiAssistantToolCallMessage, OpenAiToolMessage } from '../history-formats';
import { spliceToolHistory, toLangChainMessages } from './langchain-message-converter';

const toolCall = (toolCallId: string, toolName: string, args: object, result: string, isError = false) => ({
  toolCallId,
  toolName,
  argumentsJson: JSON.stringify(args),
  result,
  isError,
  sequenceIndex: 0,
  expired: false,
  invalidatedBy: '',
  interrupted: false,
  compactedItems: 0,
  approval: ApprovalStatus.APPROVAL_STATUS_NONE,
});

const rounds: Round[] = [
  Round.fromPartial({
    roundIndex: 0,
    resumedFromRunId: '',
    calls: [
      toolCall('call_a', 'get_order', { orderId: 'A-1' }, 'shipped'),
      toolCall('call_b', 'get_customer', { id: 7 }, '{"name":"Ada"}'),
    ],
  }),
  Round.fromPartial({
    roundIndex: 1,
    resumedFromRunId: '',
    calls: [toolCall('call_c', 'charge_card', { amount: 12 }, 'Error: card declined', true)],
  }),
];

describe('toLangChainMessages', () => {
  it('turns each replayed round into an AIMessage of tool calls and one ToolMessage per call, errors kept', () => {
    const messages = toLangChainMessages({ turns: [{ rounds, assistantMessageId: 'a1' }] });

    expect(messages.map((m) => m.type)).toEqual(['ai', 'tool', 'tool', 'ai', 'tool']);
    const [first, a, b, second, c] = messages as [AIMessage, ToolMessage, ToolMessage, AIMessage, ToolMessage];
    expect(first.content).toBe('');
    expect(first.tool_calls).toEqual([
      { type: 'tool_call', id: 'call_a', name: 'get_order', args: { orderId: 'A-1' } },
      { type: 'tool_call', id: 'call_b', name: 'get_customer', args: { id: 7 } },
    ]);
    expect([a, b].map((m) => [m.tool_call_id, m.name, m.content, m.status])).toEqual([
      ['call_a', 'get_order', 'shipped', 'success'],
      ['call_b', 'get_customer', '{"name":"Ada"}', 'success'],
    ]);
    expect(second.tool_calls).toEqual([{ type: 'tool_call', id: 'call_c', name: 'charge_card', args: { amount: 12 } }]);
    expect([c.tool_call_id, c.content, c.status]).toEqual(['call_c', 'Error: card declined', 'error']);
  });

  it('converts OpenAI-format messages, naming each ToolMessage after its call', () => {
    const openai: Array<OpenAiAssistantToolCallMessage | OpenAiToolMessage> = [
      {
        role: 'assistant',
        content: null,
        tool_calls: [{ id: 'call_a', type: 'function', function: { name: 'get_order', arguments: '{"orderId":"A-1"}' } }],
      },
      { role: 'tool', tool_call_id: 'call_a', content: 'shipped' },
    ];

    const [assistant, result] = toLangChainMessages(openai) as [AIMessage, ToolMessage];

    expect(assistant.tool_calls).toEqual([{ type: 'tool_call', id: 'call_a', name: 'get_order', args: { orderId: 'A-1' } }]);
    expect([result.tool_call_id, result.name, result.content]).toEqual(['call_a', 'get_order', 'shipped']);
  });

  it('refuses arguments that are not JSON, naming the call', () => {
    const broken: Round[] = [
      Round.fromPartial({ roundIndex: 0, resumedFromRunId: '', calls: [{ ...toolCall('call_z', 'x', {}, 'r'), argumentsJson: '{' }] }),
    ];
    expect(() => toLangChainMessages({ turns: [{ rounds: broken, assistantMessageId: 'a1' }] })).toThrow(
      'the arguments of tool call "call_z" are not JSON',
    );
  });
});

describe('spliceToolHistory', () => {
  it("inserts each turn's tool messages right before the host's message the turn names; a turn whose message is gone is left out", () => {
    const host = [
      new HumanMessage({ content: 'where is A-1?', id: 'u1' }),
      new AIMessage({ content: 'Shipped.', id: 'a1' }),
      new HumanMessage({ content: 'and now?', id: 'u2' }),
    ];

    const messages = spliceToolHistory(host, {
      turns: [
        { rounds: [rounds[0]], assistantMessageId: 'a1' },
        { rounds: [rounds[1]], assistantMessageId: 'gone' },
      ],
    });

    expect(messages.map((m) => `${m.type}:${m.id ?? (m as ToolMessage).tool_call_id ?? ''}`)).toEqual([
      'human:u1',
      'ai:',
      'tool:call_a',
      'tool:call_b',
      'ai:a1',
      'human:u2',
    ]);
    expect(host).toHaveLength(3);
  });

  it("puts a failed run's tool messages right after the host message it started from (the turn's afterMessageId)", () => {
    const host = [
      new HumanMessage({ content: 'where is A-1?', id: 'u1' }),
      new AIMessage({ content: 'Sorry, that failed.', id: 'a-host' }),
      new HumanMessage({ content: 'charge it', id: 'u2' }),
    ];

    const messages = spliceToolHistory(host, {
      turns: [
        { rounds: [rounds[0]], assistantMessageId: '', afterMessageId: 'u1' },
        { rounds: [rounds[1]], assistantMessageId: '', afterMessageId: '' },
      ],
    });

    expect(messages.map((m) => `${m.type}:${m.id ?? (m as ToolMessage).tool_call_id ?? ''}`)).toEqual([
      'human:u1',
      'ai:',
      'tool:call_a',
      'tool:call_b',
      'ai:a-host',
      'human:u2',
      'ai:',
      'tool:call_c',
    ]);
  });
});
