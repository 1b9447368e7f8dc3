/**
 * One conversation in every format the service replays: parallel calls, a
 * JSON result, a text result, an error result, an empty id and an expiry
 * placeholder. Each output is the API's own shape, ready to concatenate.
 */
import type { HistoryFormat } from './replay-history';
import { EMPTY_ID, EXPIRED_NOTICE as EXPIRED, formatConversationTurn } from './format-conversation.fixture';
import { FORMAT_PROBLEMS } from './replay-test-support.fixture';

const replay = (format: HistoryFormat) => formatConversationTurn(format).messages;
import { testTokens } from '../projection/test-tokens.fixture';

describe('replayed formats', () => {
  it('OpenAI Responses: function_call items, then their function_call_output items, per round; no item ids', () => {
    expect(replay('openai_responses')).toEqual([
      { type: 'function_call', call_id: 'call_order', name: 'get_order', arguments: '{"id":"A-1"}' },
      { type: 'function_call', call_id: EMPTY_ID, name: 'get_note', arguments: '{}' },
      { type: 'function_call_output', call_id: 'call_order', output: '{"status":"shipped"}' },
      { type: 'function_call_output', call_id: EMPTY_ID, output: 'call back tomorrow' },
      { type: 'function_call', call_id: 'call.charge', name: 'charge_card', arguments: '{"amount":30}' },
      { type: 'function_call_output', call_id: 'call.charge', output: '[error] card declined' },
      { type: 'function_call', call_id: 'call_rate', name: 'get_rate', arguments: '{}' },
      { type: 'function_call_output', call_id: 'call_rate', output: EXPIRED },
    ]);
  });

  it('Gemini: model functionCall parts, then user functionResponse parts with the same id and name; response always an object', () => {
    expect(replay('gemini')).toEqual([
      {
        role: 'model',
        parts: [
          { functionCall: { id: 'call_order', name: 'get_order', args: { id: 'A-1' } } },
          { functionCall: { id: EMPTY_ID, name: 'get_note', args: {} } },
        ],
      },
      {
        role: 'user',
        parts: [
          { functionResponse: { id: 'call_order', name: 'get_order', response: { status: 'shipped' } } },
          { functionResponse: { id: EMPTY_ID, name: 'get_note', response: { output: 'call back tomorrow' } } },
        ],
      },
      { role: 'model', parts: [{ functionCall: { id: 'call.charge', name: 'charge_card', args: { amount: 30 } } }] },
      { role: 'user', parts: [{ functionResponse: { id: 'call.charge', name: 'charge_card', response: { error: 'card declined' } } }] },
      { role: 'model', parts: [{ functionCall: { id: 'call_rate', name: 'get_rate', args: {} } }] },
      { role: 'user', parts: [{ functionResponse: { id: 'call_rate', name: 'get_rate', response: { output: EXPIRED } } }] },
    ]);
  });

  it('Bedrock Converse: toolUse blocks, then toolResult blocks (json for JSON, text otherwise, status error); ids made valid', () => {
    const messages = replay('bedrock_converse') as Array<{ content: Array<{ toolUse?: { toolUseId: string } }> }>;
    const chargeId = messages[2].content[0].toolUse!.toolUseId;
    expect(chargeId).toMatch(/^tooluse_[0-9a-f]{26}$/);
    expect(messages).toEqual([
      {
        role: 'assistant',
        content: [
          { toolUse: { toolUseId: 'call_order', name: 'get_order', input: { id: 'A-1' } } },
          { toolUse: { toolUseId: EMPTY_ID, name: 'get_note', input: {} } },
        ],
      },
      {
        role: 'user',
        content: [
          { toolResult: { toolUseId: 'call_order', content: [{ json: { status: 'shipped' } }], status: 'success' } },
          { toolResult: { toolUseId: EMPTY_ID, content: [{ text: 'call back tomorrow' }], status: 'success' } },
        ],
      },
      { role: 'assistant', content: [{ toolUse: { toolUseId: chargeId, name: 'charge_card', input: { amount: 30 } } }] },
      { role: 'user', content: [{ toolResult: { toolUseId: chargeId, content: [{ text: 'card declined' }], status: 'error' } }] },
      { role: 'assistant', content: [{ toolUse: { toolUseId: 'call_rate', name: 'get_rate', input: {} } }] },
      { role: 'user', content: [{ toolResult: { toolUseId: 'call_rate', content: [{ text: EXPIRED }], status: 'success' } }] },
    ]);
  });

  it('counts the tokens of what each format sends: its wrapping of a result counts with the result', () => {
    const tokensOf = (format: HistoryFormat) => formatConversationTurn(format).rounds.flatMap((r) => r.calls.map((c) => c.tokens));
    const chat = tokensOf('openai_chat');
    // get_order (JSON object), get_note (text), charge_card (error), get_rate (notice).
    expect(tokensOf('anthropic_messages')).toEqual(chat);
    expect(tokensOf('bedrock_converse')).toEqual(chat);
    expect(tokensOf('openai_responses')).toEqual([chat[0], chat[1], chat[2] + testTokens('[error] '), chat[3]]);
    const output = testTokens('{"output":""}');
    expect(tokensOf('gemini')).toEqual([chat[0], chat[1] + output, chat[2] + testTokens('{"error":""}'), chat[3] + output]);
  });

  it.each(Object.keys(FORMAT_PROBLEMS) as HistoryFormat[])('%s: valid by the pairing rules its API enforces', (format) => {
    expect(FORMAT_PROBLEMS[format](replay(format))).toEqual([]);
  });
});
