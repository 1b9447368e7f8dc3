import type { HistoryFormat } from './replay-history';
import { GEMINI_PLACEHOLDER_SIGNATURE } from './provider-messages';
import { REASONING_BY_FORMAT, reasoningTurns } from './reasoning-conversation.fixture';

const REFUND_ARGS = { amount: 30 };

/** Where each API wants a resumed round's reasoning: the refund, approved and resumed in run r2, as its first message. */
describe("a resumed round's response, placed as its provider's API wants it", () => {
  it.each<[HistoryFormat & keyof typeof REASONING_BY_FORMAT, unknown]>([
    [
      'anthropic_messages',
      {
        role: 'assistant',
        content: [
          { type: 'thinking', thinking: 'Round 1: the order comes first.', signature: 'EqQBCkgIARABGAIiQ1' },
          { type: 'redacted_thinking', data: 'EmwKAhgBEgy3va3pzix/LafPsn4a1' },
          { type: 'tool_use', id: 'call_refund', name: 'refund', input: REFUND_ARGS },
        ],
      },
    ],
    [
      'openai_responses',
      {
        type: 'reasoning',
        id: 'rs_68a1f0c2d4e81',
        summary: [{ type: 'summary_text', text: 'Round 1: look the order up.' }],
        encrypted_content: 'gAAAAABoofDC1',
      },
    ],
    [
      'gemini',
      {
        role: 'model',
        parts: [
          { text: 'Round 1: the order first.', thought: true },
          { functionCall: { id: 'call_refund', name: 'refund', args: REFUND_ARGS }, thoughtSignature: 'CiQB0e2Kb8call_refund' },
        ],
      },
    ],
    [
      'bedrock_converse',
      {
        role: 'assistant',
        content: [
          { reasoningContent: { reasoningText: { text: 'Round 1: the order first.', signature: 'EqQBCkgI1' } } },
          { toolUse: { toolUseId: 'call_refund', name: 'refund', input: REFUND_ARGS } },
        ],
      },
    ],
  ])('%s', (format, firstMessage) => {
    const [, resumed] = reasoningTurns(format, REASONING_BY_FORMAT[format]);
    expect(resumed.runId).toBe('r2');
    expect(resumed.messages[0]).toEqual(firstMessage);
    // Key order too: the items go back as the provider produced them.
    expect(JSON.stringify(resumed.messages[0])).toBe(JSON.stringify(firstMessage));
  });

  it('gives the Responses function calls their fc_ ids right after their reasoning item, the text between', () => {
    const [first] = reasoningTurns('openai_responses', REASONING_BY_FORMAT.openai_responses);
    expect(first.messages.slice(1, 4)).toEqual([
      { type: 'message', role: 'assistant', content: 'I will check the order and its notes first.' },
      { type: 'function_call', id: 'fc_68a1f0c2d4e90_call_order', call_id: 'call_order', name: 'get_order', arguments: '{"id":"A-1"}' },
      { type: 'function_call', id: 'fc_68a1f0c2d4e91_call_note', call_id: 'call_note', name: 'get_note', arguments: '{}' },
    ]);
  });

  it("signs only a Gemini step's first call, as Gemini does with parallel calls", () => {
    const [first] = reasoningTurns('gemini', REASONING_BY_FORMAT.gemini);
    const calls = (first.messages[0] as { parts: Array<{ functionCall?: unknown; thoughtSignature?: string }> }).parts.filter(
      (p) => p.functionCall,
    );
    expect(calls.map((p) => p.thoughtSignature)).toEqual(['CiQB0e2Kb8call_order', undefined]);
  });

  it("keeps another provider's reasoning out, text kept; a Gemini replay of the open turn signs each step's first call with Google's placeholder", () => {
    const turns = reasoningTurns('gemini', REASONING_BY_FORMAT.anthropic_messages);
    expect(turns.map((t) => t.messages[0])).toEqual([
      {
        role: 'model',
        parts: [
          { text: 'I will check the order and its notes first.' },
          { functionCall: { id: 'call_order', name: 'get_order', args: { id: 'A-1' } }, thoughtSignature: GEMINI_PLACEHOLDER_SIGNATURE },
          { functionCall: { id: 'call_note', name: 'get_note', args: {} } },
        ],
      },
      {
        role: 'model',
        parts: [{ functionCall: { id: 'call_refund', name: 'refund', args: REFUND_ARGS }, thoughtSignature: GEMINI_PLACEHOLDER_SIGNATURE }],
      },
    ]);
    expect(turns.flatMap((t) => t.rounds.map((r) => [r.reasoningPlaceholder, r.response?.reasoningOmitted]))).toEqual([
      [true, 'other_provider'],
      [true, 'other_provider'],
    ]);
  });

  it('keeps the reasoning of another model out when the request names the model it is about to call', () => {
    const turns = reasoningTurns('anthropic_messages', REASONING_BY_FORMAT.anthropic_messages, 'claude-opus-4-5');
    expect(JSON.stringify(turns.map((t) => t.messages))).not.toContain('thinking');
    expect(turns.flatMap((t) => t.rounds.map((r) => r.response?.reasoningOmitted))).toEqual(['other_model', 'other_model']);
  });
});
