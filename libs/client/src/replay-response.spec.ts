import type { FormattableRound } from '../../domain/src/replay/provider-messages';
import { toBedrockConverseMessages, toGeminiContents, toOpenAiResponsesItems } from '../../domain/src/replay/rounds-to-provider-messages';
import { ApprovalStatus, GetReplayHistoryResponse, ListToolInvocationsResponse, RunStatus } from './generated/toolhistory/v1/toolhistory';
import type { HistoryMessages } from './history-formats';
import { replayHistoryOf } from './replay-response';
import { spliceHistory } from './splice-history';

/** A response as it crosses the wire: encoded by the generated code and decoded again, as the gRPC client does. */
const overTheWire = (response: GetReplayHistoryResponse) =>
  GetReplayHistoryResponse.decode(GetReplayHistoryResponse.encode(response).finish());

const call = {
  toolCallId: 'call_refund1',
  toolName: 'refund',
  argumentsJson: '{"amount":120}',
  result: 'Refused: a person denied this call.',
  isError: true,
  sequenceIndex: 0,
  interrupted: false,
  approval: ApprovalStatus.APPROVAL_STATUS_DENIED,
};
const openAiMessages = [
  {
    role: 'assistant',
    content: null,
    tool_calls: [{ id: 'call_refund1', type: 'function', function: { name: 'refund', arguments: '{"amount":120}' } }],
  },
  { role: 'tool', tool_call_id: 'call_refund1', content: 'Refused: a person denied this call.' },
];
const response = GetReplayHistoryResponse.fromPartial({
  turns: [
    {
      runId: 'run-8',
      assistantMessageId: '',
      afterMessageId: 'msg-user-2',
      status: RunStatus.RUN_STATUS_FAILED,
      rounds: [{ roundIndex: 1, resumedFromRunId: 'run-7', calls: [call] }],
      messagesJson: JSON.stringify(openAiMessages),
    },
    {
      runId: 'run-9',
      assistantMessageId: '',
      status: RunStatus.RUN_STATUS_RUNNING,
      rounds: [
        {
          roundIndex: 0,
          calls: [{ ...call, toolCallId: 'call_ship', toolName: 'ship', approval: ApprovalStatus.APPROVAL_STATUS_NONE, interrupted: true }],
        },
      ],
      messagesJson: '[]',
    },
  ],
  pendingApprovals: [
    {
      toolCallId: 'call_wire',
      toolName: 'wire_money',
      argumentsJson: '{"to":"DE89"}',
      runId: 'run-9',
      requestedAt: new Date('2026-11-02T10:15:30.000Z'),
      reason: 'transfers need a person',
      roundIndex: 0,
      sequenceIndex: 1,
    },
  ],
  historyTokens: 42,
});

describe('replay results, typed', () => {
  it('carry the pending approvals, and per turn afterMessageId, per round resumedFromRunId, per call interrupted and approval', () => {
    const history = replayHistoryOf(overTheWire(response), 'openai');
    expect(history.pendingApprovals).toEqual([
      {
        toolCallId: 'call_wire',
        toolName: 'wire_money',
        argumentsJson: '{"to":"DE89"}',
        runId: 'run-9',
        requestedAt: new Date('2026-11-02T10:15:30.000Z'),
        reason: 'transfers need a person',
        roundIndex: 0,
        sequenceIndex: 1,
      },
    ]);
    expect(history.turns.map((turn) => [turn.runId, turn.afterMessageId])).toEqual([
      ['run-8', 'msg-user-2'],
      // Unset on the wire: empty, as every absent proto3 string.
      ['run-9', ''],
    ]);
    expect(history.turns.map((turn) => turn.rounds[0].resumedFromRunId)).toEqual(['run-7', '']);
    expect(history.turns.map((turn) => turn.rounds[0].calls[0])).toEqual([
      expect.objectContaining({ interrupted: false, approval: ApprovalStatus.APPROVAL_STATUS_DENIED }),
      expect.objectContaining({ interrupted: true, approval: ApprovalStatus.APPROVAL_STATUS_NONE }),
    ]);
    expect(history.messages).toEqual(openAiMessages);
    expect(history.historyTokens).toBe(42);
  });

  it('build ai-sdk messages from the rounds, and keep the same turn fields', () => {
    const history = replayHistoryOf(overTheWire(response), 'ai-sdk');
    expect(history.turns[0].afterMessageId).toBe('msg-user-2');
    expect(history.turns[0].messages[1]).toEqual({
      role: 'tool',
      content: [
        {
          type: 'tool-result',
          toolCallId: 'call_refund1',
          toolName: 'refund',
          output: { type: 'error-text', value: 'Refused: a person denied this call.' },
        },
      ],
    });
    expect(history.pendingApprovals.map((approval) => approval.toolCallId)).toEqual(['call_wire']);
  });

  describe("parse each turn's messages as the API of the format takes them (as the service writes them)", () => {
    const rounds: FormattableRound[] = [
      {
        calls: [
          {
            toolCallId: 'call_a',
            toolName: 'get_order',
            arguments: { orderId: 'A-1' },
            result: '{"status":"shipped"}',
            isError: false,
            resultJson: { status: 'shipped' },
          },
          {
            toolCallId: 'call:b',
            toolName: 'refund',
            arguments: { amount: 120 },
            result: 'Refused: a person denied this call.',
            isError: true,
          },
        ],
      },
    ];
    const turnIn = (messagesJson: string) =>
      overTheWire(
        GetReplayHistoryResponse.fromPartial({
          turns: [{ runId: 'run-1', assistantMessageId: 'msg-9', status: RunStatus.RUN_STATUS_COMPLETED, messagesJson }],
        }),
      );

    it('openai-responses: function_call items, then function_call_output items', () => {
      const history = replayHistoryOf(turnIn(JSON.stringify(toOpenAiResponsesItems(rounds))), 'openai-responses');
      const items: Array<HistoryMessages['openai-responses']> = history.messages;
      expect(items).toEqual([
        { type: 'function_call', call_id: 'call_a', name: 'get_order', arguments: '{"orderId":"A-1"}' },
        { type: 'function_call', call_id: 'call:b', name: 'refund', arguments: '{"amount":120}' },
        { type: 'function_call_output', call_id: 'call_a', output: '{"status":"shipped"}' },
        { type: 'function_call_output', call_id: 'call:b', output: '[error] Refused: a person denied this call.' },
      ]);
      const outputs = items.flatMap((item) => (item.type === 'function_call_output' ? [item.output] : []));
      expect(outputs).toHaveLength(2);
      expect(history.turns[0].messages).toEqual(items);
    });

    it('gemini: a model content of functionCall parts, then a user content of functionResponse parts', () => {
      const history = replayHistoryOf(turnIn(JSON.stringify(toGeminiContents(rounds))), 'gemini');
      expect(history.messages).toEqual([
        {
          role: 'model',
          parts: [
            { functionCall: { id: 'call_a', name: 'get_order', args: { orderId: 'A-1' } } },
            { functionCall: { id: 'call:b', name: 'refund', args: { amount: 120 } } },
          ],
        },
        {
          role: 'user',
          parts: [
            { functionResponse: { id: 'call_a', name: 'get_order', response: { status: 'shipped' } } },
            { functionResponse: { id: 'call:b', name: 'refund', response: { error: 'Refused: a person denied this call.' } } },
          ],
        },
      ]);
      const [, results] = history.messages;
      expect(results.role === 'user' ? results.parts.map((part) => part.functionResponse.name) : []).toEqual(['get_order', 'refund']);
    });

    it('bedrock-converse: an assistant message of toolUse blocks, then a user message of toolResult blocks', () => {
      const history = replayHistoryOf(turnIn(JSON.stringify(toBedrockConverseMessages(rounds))), 'bedrock-converse');
      const [uses, results] = history.messages;
      expect(uses).toEqual({
        role: 'assistant',
        content: [
          { toolUse: { toolUseId: 'call_a', name: 'get_order', input: { orderId: 'A-1' } } },
          { toolUse: { toolUseId: expect.stringMatching(/^tooluse_[0-9a-f]+$/), name: 'refund', input: { amount: 120 } } },
        ],
      });
      expect(results.role === 'user' ? results.content.map(({ toolResult }) => [toolResult.content, toolResult.status]) : []).toEqual([
        [[{ json: { status: 'shipped' } }], 'success'],
        [[{ text: 'Refused: a person denied this call.' }], 'error'],
      ]);
      // The ids the result blocks name are those of the use blocks.
      expect(results.role === 'user' && uses.role === 'assistant' && results.content[1].toolResult.toolUseId).toBe(
        // A block of the assistant message may be reasoning or text too: this round has tool uses only.
        uses.role === 'assistant' && (uses.content[1] as { toolUse: { toolUseId: string } }).toolUse.toolUseId,
      );
    });

    it('an empty messages_json (a structured-only view) is no messages', () => {
      expect(replayHistoryOf(turnIn(''), 'gemini').messages).toEqual([]);
    });
  });

  it("splice as they come: a failed run after the host's message it started from, a running one at the end", () => {
    const history = replayHistoryOf(overTheWire(response), 'openai');
    const host = [
      { id: 'msg-user-2', role: 'user', content: 'refund order 7' },
      { id: 'msg-answer-2', role: 'assistant', content: 'That did not work.' },
    ];
    const spliced = spliceHistory(host, history.turns, (message) => message.id);
    expect(spliced).toEqual([host[0], ...history.turns[0].messages, host[1], ...history.turns[1].messages]);
  });

  it("list invocations with their approval, the sizes the producer cut from, and the result's run", () => {
    const page = ListToolInvocationsResponse.fromPartial({
      invocations: [
        {
          toolCallId: 'call_refund1',
          approval: ApprovalStatus.APPROVAL_STATUS_APPROVED,
          approvalDecidedBy: 'desk-3',
          approvalDecidedAt: new Date('2026-11-02T10:20:00.000Z'),
          approvalRequestReason: 'refunds over 100 EUR need a person',
          approvalDecisionReason: 'checked the order',
          argumentsOriginalBytes: '2048',
          resultOriginalBytes: '3000002',
          resultRunId: 'run-8',
        },
      ],
    });
    const [invocation] = ListToolInvocationsResponse.decode(ListToolInvocationsResponse.encode(page).finish()).invocations;
    expect(invocation).toMatchObject({
      approval: ApprovalStatus.APPROVAL_STATUS_APPROVED,
      approvalDecidedBy: 'desk-3',
      approvalDecidedAt: new Date('2026-11-02T10:20:00.000Z'),
      approvalRequestReason: 'refunds over 100 EUR need a person',
      approvalDecisionReason: 'checked the order',
      argumentsOriginalBytes: '2048',
      resultOriginalBytes: '3000002',
      resultRunId: 'run-8',
    });
  });
});
