import type { ToolEvent } from '@toolhistory/contract';
import {
  approvalDecided,
  approvalRequested,
  modelResponse,
  runCompleted,
  toolCall,
  toolResult,
} from '../../../../test/support/tool-event-factory';
import type { ReplayRequest } from './replay-history';
import { inRun, iso, policyOf, replayOf, T0 } from './replay-test-support.fixture';

const R1 = { ...inRun('r1'), userMessageId: 'u1' };
const R2 = { ...inRun('r2'), userMessageId: 'u1' };
const THINKING = [{ type: 'thinking', thinking: 'the order first', signature: 'sig-1' }];

/** Run 1 (still going): round 0 answered, round 1 asked; each round with the model's response before its calls. */
const going = (response: Partial<Parameters<typeof modelResponse>[1]> = {}): ToolEvent[] => [
  modelResponse(R1, { roundIndex: 0, reasoning: THINKING, text: 'Checking the order.', occurredAt: iso(1), ...response }),
  toolCall(R1, { roundIndex: 0, sequenceIndex: 0, toolCallId: 'call_a', toolName: 'get_order', occurredAt: iso(1) }),
  toolResult(R1, { roundIndex: 0, sequenceIndex: 0, toolCallId: 'call_a', occurredAt: iso(2) }),
  modelResponse(R1, { roundIndex: 1, reasoning: THINKING, occurredAt: iso(3), ...response }),
  toolCall(R1, { roundIndex: 1, sequenceIndex: 0, toolCallId: 'call_b', toolName: 'get_invoice', occurredAt: iso(3) }),
];
const PROGRESS = policyOf({ defaults: { visibility: 'per_service_call' } });
const firstRound = (events: ToolEvent[], request: Partial<ReplayRequest>, policy = PROGRESS) =>
  replayOf(events, { asOf: T0 + 10_000, ...request }, policy).turns[0]?.rounds[0];

describe('what a round carries of the model response (REASONING_RULES)', () => {
  it.each<[string, ToolEvent[], Partial<ReplayRequest>, object]>([
    [
      'the recording provider, the turn still going: reasoning and text',
      going(),
      { format: 'anthropic_messages' },
      { provider: 'anthropic', text: 'Checking the order.', reasoning: THINKING, reasoningOmitted: 'none' },
    ],
    ['another provider: none', going(), { format: 'openai_responses' }, { reasoningOmitted: 'other_provider' }],
    [
      'Claude on Bedrock is another provider than Anthropic',
      going(),
      { format: 'bedrock_converse' },
      { reasoningOmitted: 'other_provider' },
    ],
    [
      'another model than the request names: none',
      going(),
      { format: 'anthropic_messages', model: 'claude-opus-4-1' },
      { reasoningOmitted: 'other_model' },
    ],
    [
      'the model the request names: kept',
      going(),
      { format: 'anthropic_messages', model: 'claude-sonnet-4-5' },
      { reasoning: THINKING, reasoningOmitted: 'none' },
    ],
    [
      'OpenAI chat carries text, no reasoning',
      going(),
      { format: 'openai_chat' },
      { text: 'Checking the order.', reasoningOmitted: 'format_has_none' },
    ],
    [
      "OpenAI chat's rounds carry the provider's reasoning when the request names it (the AI SDK's history)",
      going(),
      { format: 'openai_chat', provider: 'anthropic' },
      { reasoning: THINKING, reasoningOmitted: 'none' },
    ],
    [
      'the turn over (a run of it answered): expired, the text stays',
      [
        ...going(),
        toolResult(R1, { roundIndex: 1, sequenceIndex: 0, toolCallId: 'call_b', occurredAt: iso(4) }),
        runCompleted(R1, { occurredAt: iso(5) }),
      ],
      { format: 'anthropic_messages' },
      { text: 'Checking the order.', reasoningOmitted: 'expired' },
    ],
  ])('%s', (_name, events, request, expected) => {
    const round = firstRound(events, request);
    expect(round?.response).toMatchObject(expected);
    if ((expected as { reasoning?: unknown }).reasoning === undefined) expect(round?.response?.reasoning).toBeUndefined();
  });

  it("keeps none of a round whose tool's rule says never", () => {
    const policy = policyOf({ defaults: { visibility: 'per_service_call' }, tools: { get_order: { reasoning: { keep: 'never' } } } });
    expect(firstRound(going(), { format: 'anthropic_messages' }, policy)?.response).toMatchObject({ reasoningOmitted: 'policy_never' });
  });

  it('gives a Gemini round of the turn that goes on the placeholder when it has no signature of its own, and none once the turn is over', () => {
    expect(firstRound(going(), { format: 'gemini' })).toMatchObject({
      reasoningPlaceholder: true,
      response: { reasoningOmitted: 'other_provider' },
    });
    const signed = going({
      provider: 'google',
      model: 'gemini-3-pro',
      reasoning: undefined,
      callSignatures: { call_a: 'sig-a', call_b: 'sig-b' },
    });
    const round = firstRound(signed, { format: 'gemini' });
    expect(round?.reasoningPlaceholder).toBeUndefined();
    expect(round?.response?.callSignatures).toEqual({ call_a: 'sig-a', call_b: 'sig-b' });
    const over = [
      ...going(),
      toolResult(R1, { roundIndex: 1, sequenceIndex: 0, toolCallId: 'call_b', occurredAt: iso(4) }),
      runCompleted(R1, { occurredAt: iso(5) }),
    ];
    expect(firstRound(over, { format: 'gemini' })?.reasoningPlaceholder).toBeUndefined();
  });

  it.each<[string, Partial<ReplayRequest>, true | undefined]>([
    ['the Gemini format', { format: 'gemini' }, true],
    ['a format any provider fits, for Google (LangChain with Gemini)', { format: 'openai_chat', provider: 'google' }, true],
    ['a format any provider fits, for another provider', { format: 'openai_chat', provider: 'anthropic' }, undefined],
    ['a format any provider fits, for none named', { format: 'openai_chat' }, undefined],
    ["another provider's format", { format: 'anthropic_messages' }, undefined],
  ])('puts the placeholder on an unsigned round of the open turn for Google only: %s', (_name, request, placeholder) => {
    expect(firstRound(going(), request)?.reasoningPlaceholder).toBe(placeholder);
  });

  it('gives a resumed round the response of the run it was made in, its reasoning kept across the pause', () => {
    const events: ToolEvent[] = [
      modelResponse(R1, { roundIndex: 0, reasoning: THINKING, occurredAt: iso(1) }),
      toolCall(R1, { roundIndex: 0, sequenceIndex: 0, toolCallId: 'call_refund', toolName: 'refund', occurredAt: iso(1) }),
      approvalRequested(R1, { roundIndex: 0, sequenceIndex: 0, toolCallId: 'call_refund', occurredAt: iso(1) }),
      runCompleted(R1, { finishReason: 'tool-calls', occurredAt: iso(2) }),
      approvalDecided(R2, { roundIndex: 0, sequenceIndex: 0, toolCallId: 'call_refund', approved: true, occurredAt: iso(5) }),
      toolResult(R2, { roundIndex: 0, sequenceIndex: 0, toolCallId: 'call_refund', occurredAt: iso(6) }),
    ];
    const turn = replayOf(events, { asOf: T0 + 10_000, format: 'anthropic_messages' }, PROGRESS).turns.find((t) => t.runId === 'r2');
    expect(turn?.rounds[0]).toMatchObject({ resumedFromRunId: 'r1', response: { reasoning: THINKING, reasoningOmitted: 'none' } });
  });

  describe('a call awaiting approval carries the response of its round, for a host that rebuilds the request from the list', () => {
    /** Run 1 asks for a refund with its thinking and text, and a lookup in another round, then waits for a person. */
    const waiting = (alsoInRound: boolean): ToolEvent[] => [
      modelResponse(R1, { roundIndex: 0, reasoning: THINKING, text: 'Refunding now.', occurredAt: iso(1) }),
      toolCall(R1, { roundIndex: 0, sequenceIndex: 0, toolCallId: 'call_refund', toolName: 'refund', occurredAt: iso(1) }),
      approvalRequested(R1, { roundIndex: 0, sequenceIndex: 0, toolCallId: 'call_refund', occurredAt: iso(1) }),
      ...(alsoInRound
        ? [
            toolCall(R1, { roundIndex: 0, sequenceIndex: 1, toolCallId: 'call_look', toolName: 'get_order', occurredAt: iso(1) }),
            toolResult(R1, { roundIndex: 0, sequenceIndex: 1, toolCallId: 'call_look', occurredAt: iso(2) }),
          ]
        : []),
      runCompleted(R1, { finishReason: 'tool-calls', occurredAt: iso(3) }),
    ];
    const pendingOf = (events: ToolEvent[], request: Partial<ReplayRequest>) =>
      replayOf(events, { asOf: T0 + 10_000, ...request }, PROGRESS).pendingApprovals;

    it.each<[string, Partial<ReplayRequest>, object]>([
      [
        'to its provider: its reasoning and text',
        { format: 'anthropic_messages' },
        { roundIndex: 0, response: { provider: 'anthropic', text: 'Refunding now.', reasoning: THINKING, reasoningOmitted: 'none' } },
      ],
      ['to another provider: its text, no reasoning', { format: 'openai_responses' }, { response: { reasoningOmitted: 'other_provider' } }],
      [
        'to another model: no reasoning',
        { format: 'anthropic_messages', model: 'claude-opus-4-1' },
        { response: { reasoningOmitted: 'other_model' } },
      ],
    ])('%s', (_, request, round) => {
      const [pending] = pendingOf(waiting(false), request);
      expect(pending).toMatchObject({ toolCallId: 'call_refund', round });
      if ((round as { response: { reasoningOmitted: string } }).response.reasoningOmitted !== 'none')
        expect(pending.round?.response?.reasoning).toBeUndefined();
    });

    it('the round waits whole: an answered call of it is not replayed either, and the waiting call carries the response', () => {
      const history = replayOf(waiting(true), { asOf: T0 + 10_000, format: 'anthropic_messages' }, PROGRESS);
      expect(history.turns.flatMap((t) => t.rounds)).toEqual([]);
      expect(history.pendingApprovals).toEqual([
        expect.objectContaining({
          toolCallId: 'call_refund',
          round: expect.objectContaining({ response: expect.objectContaining({ reasoning: THINKING }) }),
        }),
      ]);
    });

    it('none when no response was recorded for the round', () => {
      const [pending] = pendingOf(
        waiting(false).filter((e) => e.type !== 'ModelResponseReceived'),
        { format: 'anthropic_messages' },
      );
      expect(pending.round).toBeUndefined();
    });
  });

  it('counts the text and the replayed reasoning in the round tokens', () => {
    const withResponse = replayOf(going(), { asOf: T0 + 10_000, format: 'anthropic_messages' }, PROGRESS).historyTokens;
    const without = replayOf(
      going().filter((e) => e.type !== 'ModelResponseReceived'),
      { asOf: T0 + 10_000, format: 'anthropic_messages' },
      PROGRESS,
    ).historyTokens;
    expect(withResponse).toBeGreaterThan(without);
  });
});
