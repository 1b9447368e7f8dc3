import type { Metadata, ServiceError } from '@grpc/grpc-js';
import type { ResponseInputItem } from 'openai/resources/responses/responses';
import {
  GetReplayHistoryRequest,
  GetReplayHistoryResponse,
  HistoryFormat,
  ReasoningOmission,
  ReplayView,
  type Round,
  RunStatus,
} from './generated/toolhistory/v1/toolhistory';
import type { HistoryFormatName } from './history-formats';
import { ToolHistoryClient } from './tool-history-client';

type ReplayCallback = (error: ServiceError | null, response: GetReplayHistoryResponse) => void;

/**
 * A client whose GetReplayHistory is answered here, with no network: each
 * request (as it would go on the wire) is kept, and answered with one turn
 * whose messages_json is `messagesJson`.
 */
function clientAnswering(messagesJson: string, rounds: Array<Partial<Round>> = []) {
  const client = new ToolHistoryClient({ address: '127.0.0.1:1' });
  const requests: GetReplayHistoryRequest[] = [];
  const stub = (client as unknown as { stub: { getReplayHistory: unknown } }).stub;
  stub.getReplayHistory = (request: GetReplayHistoryRequest, _metadata: Metadata, _options: unknown, callback: ReplayCallback) => {
    requests.push(GetReplayHistoryRequest.decode(GetReplayHistoryRequest.encode(request).finish()));
    const response = GetReplayHistoryResponse.fromPartial({
      turns: [{ runId: 'run-1', assistantMessageId: 'msg-1', status: RunStatus.RUN_STATUS_COMPLETED, messagesJson, rounds }],
    });
    setImmediate(() => callback(null, response));
    return { cancel: () => undefined };
  };
  return { client, requests };
}

describe('ToolHistoryClient.getReplayHistory formats', () => {
  it.each<[HistoryFormatName, HistoryFormat, ReplayView]>([
    ['openai', HistoryFormat.HISTORY_FORMAT_OPENAI_CHAT, ReplayView.REPLAY_VIEW_UNSPECIFIED],
    ['anthropic', HistoryFormat.HISTORY_FORMAT_ANTHROPIC_MESSAGES, ReplayView.REPLAY_VIEW_UNSPECIFIED],
    ['ai-sdk', HistoryFormat.HISTORY_FORMAT_OPENAI_CHAT, ReplayView.REPLAY_VIEW_STRUCTURED],
    ['openai-responses', HistoryFormat.HISTORY_FORMAT_OPENAI_RESPONSES, ReplayView.REPLAY_VIEW_UNSPECIFIED],
    ['gemini', HistoryFormat.HISTORY_FORMAT_GEMINI, ReplayView.REPLAY_VIEW_UNSPECIFIED],
    ['bedrock-converse', HistoryFormat.HISTORY_FORMAT_BEDROCK_CONVERSE, ReplayView.REPLAY_VIEW_UNSPECIFIED],
  ])('asks for %s as %s, by default with view %s', async (format, wireFormat, view) => {
    const { client, requests } = clientAnswering('[]');
    try {
      await client.getReplayHistory({ tenantId: 't1', conversationId: 'c1', format });
    } finally {
      client.close();
    }
    expect(requests).toEqual([expect.objectContaining({ tenantId: 't1', conversationId: 'c1', format: wireFormat, view })]);
  });

  it('gives the messages of the new formats parsed and typed', async () => {
    const items = [
      { type: 'function_call', call_id: 'call_1', name: 'get_weather', arguments: '{"city":"Oslo"}' },
      { type: 'function_call_output', call_id: 'call_1', output: '{"tempC":-3}' },
    ];
    const { client } = clientAnswering(JSON.stringify(items));
    try {
      const history = await client.getReplayHistory({ tenantId: 't1', conversationId: 'c1', format: 'openai-responses', view: 'messages' });
      expect(history.messages).toEqual(items);
      // What the OpenAI SDK's responses.create takes as input, without a cast.
      const input: ResponseInputItem[] = history.messages;
      expect(input).toHaveLength(2);
      const [call] = history.messages;
      // Typed by the format: a function_call item has its name, an output its output.
      expect(call.type === 'function_call' ? call.name : call.type === 'function_call_output' ? call.output : call.type).toBe(
        'get_weather',
      );
    } finally {
      client.close();
    }
  });

  it('refuses a format it does not know before calling the service', async () => {
    const { client, requests } = clientAnswering('[]');
    try {
      await expect(
        client.getReplayHistory({ tenantId: 't1', conversationId: 'c1', format: 'gemini-chat' as HistoryFormatName }),
      ).rejects.toThrow('format: "gemini-chat" is not one of openai, anthropic, ai-sdk, openai-responses, gemini, bedrock-converse');
    } finally {
      client.close();
    }
    expect(requests).toEqual([]);
  });

  it('names the model and provider the host is about to call, and gives each round what the service says of its reasoning', async () => {
    const round = {
      roundIndex: 0,
      calls: [],
      provider: 'google',
      model: 'gemini-3-pro-preview',
      text: 'Checking the order.',
      reasoningOmitted: ReasoningOmission.REASONING_OMISSION_OTHER_MODEL,
      reasoningPlaceholder: true,
    };
    const { client, requests } = clientAnswering('[]', [round]);
    try {
      const history = await client.getReplayHistory({
        tenantId: 't1',
        conversationId: 'c1',
        format: 'gemini',
        model: 'gemini-3-flash-preview',
        provider: 'google',
      });
      expect(history.turns[0].rounds).toEqual([expect.objectContaining(round)]);
      await client.getReplayHistory({ tenantId: 't1', conversationId: 'c1', format: 'gemini' });
    } finally {
      client.close();
    }
    expect(requests[0]).toEqual(expect.objectContaining({ model: 'gemini-3-flash-preview', provider: 'google' }));
    // Unset: the wire's empty string, which the service reads as "any".
    expect(requests[1]).toEqual(expect.objectContaining({ model: '', provider: '' }));
  });
});
