/**
 * Reasoning state end to end (docs/adr/027-reasoning-state.md): each round's
 * ModelResponseReceived through the real broker into the built service,
 * replayed through its gRPC server to the provider that produced it. A
 * Claude-style turn with thinking paused for an approval and resumed, a
 * Gemini-style run that crashed and was continued, an OpenAI reasoning
 * model's encrypted reasoning with its fc_ ids; and the default rule: the
 * reasoning rests apart from the events only until its turn ends.
 */
import type { Producer } from 'kafkajs';
import type { JsonObject } from '../libs/contract/src';
import { anthropicProblems, geminiProblems, responsesProblems } from '../libs/domain/src/replay/format-problems.fixture';
import type { ProviderMessage } from '../libs/domain/src/replay/provider-messages';
import { ReplayResponse, toolHistoryClient, ToolHistoryTestClient } from './support/grpc-client';
import { connectedProducer, publishEvents, testKafka } from './support/kafka-fixtures';
import { RunningStack, startRunningStack } from './support/running-stack';
import { uniqueName } from './support/test-environment';
import {
  approvalDecided,
  approvalRequested,
  modelResponse,
  RunScope,
  runCompleted,
  runFailed,
  toolCall,
  toolResult,
} from './support/tool-event-factory';
import { waitFor } from './support/wait-for';

const T0 = Date.now() - 5 * 60_000;
const at = (seconds: number) => new Date(T0 + seconds * 1000).toISOString();

const THINKING: JsonObject[] = [
  { type: 'thinking', thinking: 'The order arrived damaged; a refund over 100 EUR needs a person.', signature: 'EqQBCkgIARABGAIiQLm3' },
  { type: 'redacted_thinking', data: 'EmwKAhgBEgy3va3pzix/LafPsn4aDMq' },
];
const ENCRYPTED: JsonObject[] = [
  {
    type: 'reasoning',
    id: 'rs_68a1f0c2d4e8819',
    summary: [{ type: 'summary_text', text: 'Check the weather first.' }],
    encrypted_content: 'gAAAAABoofDCk3Vq0-b1Zr6v',
  },
];

describe('reasoning state through the real broker and the real gRPC server', () => {
  let stack: RunningStack;
  let producer: Producer;
  let grpc: ToolHistoryTestClient;
  const tenantId = uniqueName('tenant');
  const scope = (conversationId: string, runId: string, channel = 'support'): RunScope => ({
    tenantId,
    conversationId,
    runId,
    channel,
    // Every run here continues the turn its user message started.
    userMessageId: 'u-1',
  });

  const replay = (conversationId: string, request: Record<string, unknown>) =>
    grpc.getReplayHistory({ tenant_id: tenantId, conversation_id: conversationId, ...request }, { deadline: new Date(Date.now() + 5_000) });
  const messagesOf = (response: ReplayResponse) => response.turns.flatMap((t) => JSON.parse(t.messages_json) as ProviderMessage[]);
  const roundsOf = (response: ReplayResponse) => response.turns.flatMap((t) => t.rounds);
  const recorded = (conversationId: string, count: number) =>
    waitFor(
      () =>
        stack.db.pool.query('SELECT count(*)::int AS n FROM events WHERE conversation_id = $1', [conversationId]).then((r) => r.rows[0].n),
      (n) => n === count,
      { what: `${count} events of ${conversationId} recorded` },
    );
  /** Where a text rests in the database: the events, the read model's responses, the reasoning kept apart. */
  const placesHolding = async (conversationId: string, text: string) =>
    (
      await stack.db.pool.query<{ place: string }>(
        `SELECT 'events' AS place FROM events WHERE conversation_id = $1 AND payload::text LIKE $2
         UNION ALL SELECT 'model_responses' FROM model_responses r WHERE conversation_id = $1 AND r::text LIKE $2
         UNION ALL SELECT 'model_reasoning' FROM model_reasoning WHERE conversation_id = $1 AND state::text LIKE $2`,
        [conversationId, `%${text}%`],
      )
    ).rows.map((r) => r.place);

  /** The reasoning states resting apart for the conversation, sealed. */
  const sealedStates = async (conversationId: string) =>
    (
      await stack.db.pool.query<{ n: number }>(
        'SELECT count(*)::int AS n FROM model_reasoning WHERE conversation_id = $1 AND state IS NULL AND state_seal IS NOT NULL',
        [conversationId],
      )
    ).rows[0].n;

  beforeAll(async () => {
    stack = await startRunningStack('reasoning', {
      policy: {
        defaults: { freshnessSeconds: 3600 },
        channels: { support: { visibility: 'per_run' }, 'long-runs': { visibility: 'per_service_call' } },
      },
    });
    producer = await connectedProducer(testKafka('reasoning'));
    grpc = toolHistoryClient(Number(stack.address.split(':').at(-1)));
  });

  afterAll(async () => {
    grpc?.close();
    await producer?.disconnect();
    await stack?.stop();
  });

  it('gives Claude its thinking back first in the resumed round, to the same model only, until the turn ends', async () => {
    const conversationId = uniqueName('conv-claude');
    const run1 = scope(conversationId, 'run-1');
    const run2 = scope(conversationId, 'run-2');
    const refund = { roundIndex: 0, sequenceIndex: 0, toolCallId: 'toolu_01refund' };
    await publishEvents(producer, stack.topic, [
      modelResponse(run1, { roundIndex: 0, text: 'I need approval for this refund.', reasoning: THINKING, occurredAt: at(1) }),
      toolCall(run1, { ...refund, toolName: 'refund', arguments: { amount: 120 }, occurredAt: at(1) }),
      approvalRequested(run1, { ...refund, occurredAt: at(2) }),
      runCompleted(run1, { finishReason: 'tool-calls', occurredAt: at(3) }),
      approvalDecided(run2, { ...refund, approved: true, occurredAt: at(10) }),
      toolResult(run2, { ...refund, result: 'refunded', occurredAt: at(11) }),
    ]);
    await recorded(conversationId, 6);

    // What the resumed run's next Claude request receives.
    const resumed = await replay(conversationId, { format: 'HISTORY_FORMAT_ANTHROPIC_MESSAGES', model: 'claude-sonnet-4-5' });
    const [assistant, results] = messagesOf(resumed) as Array<{ role: string; content: JsonObject[] }>;
    expect(assistant.content).toEqual([
      ...THINKING,
      { type: 'text', text: 'I need approval for this refund.' },
      { type: 'tool_use', id: 'toolu_01refund', name: 'refund', input: { amount: 120 } },
    ]);
    expect(JSON.stringify(assistant.content.slice(0, 2))).toBe(JSON.stringify(THINKING));
    expect(results.content).toEqual([{ type: 'tool_result', tool_use_id: 'toolu_01refund', content: 'refunded', is_error: false }]);
    expect(anthropicProblems(messagesOf(resumed))).toEqual([]);
    expect(roundsOf(resumed)).toEqual([
      expect.objectContaining({
        resumed_from_run_id: 'run-1',
        provider: 'anthropic',
        model: 'claude-sonnet-4-5',
        reasoning_omitted: 'REASONING_OMISSION_UNSPECIFIED',
      }),
    ]);
    expect(JSON.parse(roundsOf(resumed)[0].reasoning_json)).toEqual(THINKING);

    // Another model, or Claude through Bedrock: the thinking stays out, the text goes.
    const opus = await replay(conversationId, { format: 'HISTORY_FORMAT_ANTHROPIC_MESSAGES', model: 'claude-opus-4-5' });
    expect(roundsOf(opus)[0]).toMatchObject({ reasoning_omitted: 'REASONING_OMISSION_OTHER_MODEL', reasoning_json: '' });
    expect(JSON.stringify(messagesOf(opus))).not.toContain('thinking');
    const bedrock = await replay(conversationId, { format: 'HISTORY_FORMAT_BEDROCK_CONVERSE' });
    expect(roundsOf(bedrock)[0]).toMatchObject({ reasoning_omitted: 'REASONING_OMISSION_OTHER_PROVIDER' });

    // The thinking rests apart from the events, sealed like every payload (nowhere in clear); listings give its size, never its content.
    expect(await placesHolding(conversationId, 'arrived damaged')).toEqual([]);
    expect(await sealedStates(conversationId)).toBe(1);
    const { invocations } = await grpc.listToolInvocations(
      { tenant_id: tenantId, conversation_id: conversationId },
      { deadline: new Date(Date.now() + 5_000) },
    );
    expect(Number(invocations[0].reasoning_bytes)).toBeGreaterThan(JSON.stringify(THINKING).length);

    // The resumed run answers: the turn is over, its thinking is gone from everywhere; the text stays.
    await publishEvents(producer, stack.topic, [
      runCompleted(run2, { assistantMessageId: 'a-1', finishReason: 'stop', occurredAt: at(12) }),
    ]);
    await recorded(conversationId, 7);
    await waitFor(
      () => sealedStates(conversationId),
      (n) => n === 0,
      { what: 'the thinking let go with its turn' },
    );
    const over = await replay(conversationId, { format: 'HISTORY_FORMAT_ANTHROPIC_MESSAGES', model: 'claude-sonnet-4-5' });
    expect(roundsOf(over)[0]).toMatchObject({ reasoning_omitted: 'REASONING_OMISSION_EXPIRED', text: 'I need approval for this refund.' });
    expect(JSON.stringify(messagesOf(over))).not.toContain('thinking');
  });

  it("signs a crashed Gemini run's calls when the turn continues, with Google's placeholder for a model that left none", async () => {
    const conversationId = uniqueName('conv-gemini');
    const run1 = scope(conversationId, 'run-1', 'long-runs');
    const run2 = scope(conversationId, 'run-2', 'long-runs');
    const thought = { text: 'Find the flight, then the hotel.', thought: true };
    const gemini = { provider: 'google', model: 'gemini-3-pro-preview', text: undefined, reasoning: undefined };
    await publishEvents(producer, stack.topic, [
      modelResponse(run1, {
        ...gemini,
        roundIndex: 0,
        reasoning: [thought],
        callSignatures: { fn_flight: 'CiQB0e2Kb8flight' },
        occurredAt: at(1),
      }),
      toolCall(run1, {
        roundIndex: 0,
        sequenceIndex: 0,
        toolCallId: 'fn_flight',
        toolName: 'find_flight',
        arguments: { to: 'LIS' },
        occurredAt: at(1),
      }),
      toolCall(run1, { roundIndex: 0, sequenceIndex: 1, toolCallId: 'fn_rate', toolName: 'get_rate', arguments: {}, occurredAt: at(1) }),
      toolResult(run1, { roundIndex: 0, sequenceIndex: 0, toolCallId: 'fn_flight', result: { flight: 'TP1351' }, occurredAt: at(2) }),
      toolResult(run1, { roundIndex: 0, sequenceIndex: 1, toolCallId: 'fn_rate', result: 1.08, occurredAt: at(2) }),
      modelResponse(run1, { ...gemini, roundIndex: 1, callSignatures: { fn_hotel: 'CiQB0e2Kb8hotel' }, occurredAt: at(3) }),
      toolCall(run1, { roundIndex: 1, sequenceIndex: 0, toolCallId: 'fn_hotel', toolName: 'find_hotel', arguments: {}, occurredAt: at(3) }),
      toolResult(run1, { roundIndex: 1, sequenceIndex: 0, toolCallId: 'fn_hotel', result: { hotel: 'Alfama' }, occurredAt: at(4) }),
      // The worker died after the hotel's result reached the next service call; run 2 continues the turn.
      modelResponse(run1, { ...gemini, roundIndex: 2, callSignatures: { fn_book: 'CiQB0e2Kb8book' }, occurredAt: at(5) }),
      toolCall(run1, { roundIndex: 2, sequenceIndex: 0, toolCallId: 'fn_book', toolName: 'book', arguments: {}, occurredAt: at(5) }),
      runFailed(run1, { occurredAt: at(6) }),
      // Run 2, same turn, asks to book again: its response keeps the turn's earlier reasoning resting.
      modelResponse(run2, { ...gemini, roundIndex: 0, callSignatures: { fn_book_again: 'CiQB0e2Kb8again' }, occurredAt: at(20) }),
      toolCall(run2, { roundIndex: 0, sequenceIndex: 0, toolCallId: 'fn_book_again', toolName: 'book', arguments: {}, occurredAt: at(20) }),
    ]);
    await recorded(conversationId, 13);

    const continued = await replay(conversationId, { format: 'HISTORY_FORMAT_GEMINI', model: 'gemini-3-pro-preview' });
    const contents = messagesOf(continued) as Array<{ role: string; parts: JsonObject[] }>;
    expect(geminiProblems(messagesOf(continued))).toEqual([]);
    expect(contents.filter((c) => c.role === 'model').map((c) => c.parts)).toEqual([
      [
        thought,
        { functionCall: { id: 'fn_flight', name: 'find_flight', args: { to: 'LIS' } }, thoughtSignature: 'CiQB0e2Kb8flight' },
        { functionCall: { id: 'fn_rate', name: 'get_rate', args: {} } },
      ],
      [{ functionCall: { id: 'fn_hotel', name: 'find_hotel', args: {} }, thoughtSignature: 'CiQB0e2Kb8hotel' }],
    ]);

    // The host switched models mid-turn: no signature of the new model, so each step's first call gets the placeholder.
    const switched = await replay(conversationId, { format: 'HISTORY_FORMAT_GEMINI', model: 'gemini-3-flash-preview' });
    expect(roundsOf(switched).map((r) => [r.reasoning_omitted, r.reasoning_placeholder])).toEqual([
      ['REASONING_OMISSION_OTHER_MODEL', true],
      ['REASONING_OMISSION_OTHER_MODEL', true],
    ]);
    const firstCalls = (messagesOf(switched) as Array<{ role: string; parts: JsonObject[] }>)
      .filter((c) => c.role === 'model')
      .map((c) => c.parts.find((p) => p.functionCall !== undefined));
    expect(firstCalls.map((p) => p?.thoughtSignature)).toEqual(['skip_thought_signature_validator', 'skip_thought_signature_validator']);
  });

  it("gives an OpenAI reasoning model its encrypted reasoning item right before the round's calls, which keep their fc_ ids", async () => {
    const conversationId = uniqueName('conv-openai');
    const run1 = scope(conversationId, 'run-1', 'long-runs');
    const openai = { provider: 'openai', model: 'gpt-5' };
    await publishEvents(producer, stack.topic, [
      modelResponse(run1, {
        ...openai,
        roundIndex: 0,
        reasoning: ENCRYPTED,
        callItemIds: { call_weather: 'fc_68a1f0c2d4e9' },
        occurredAt: at(1),
      }),
      toolCall(run1, {
        roundIndex: 0,
        sequenceIndex: 0,
        toolCallId: 'call_weather',
        toolName: 'get_weather',
        arguments: { city: 'Lisbon' },
        occurredAt: at(1),
      }),
      toolResult(run1, { roundIndex: 0, sequenceIndex: 0, toolCallId: 'call_weather', result: '18°C, clear', occurredAt: at(2) }),
      modelResponse(run1, { ...openai, roundIndex: 1, reasoning: undefined, text: 'Now the flights.', occurredAt: at(3) }),
      toolCall(run1, {
        roundIndex: 1,
        sequenceIndex: 0,
        toolCallId: 'call_flights',
        toolName: 'find_flights',
        arguments: {},
        occurredAt: at(3),
      }),
    ]);
    await recorded(conversationId, 5);

    const items = messagesOf(await replay(conversationId, { format: 'HISTORY_FORMAT_OPENAI_RESPONSES', model: 'gpt-5' }));
    expect(responsesProblems(items)).toEqual([]);
    expect(items).toEqual([
      ...ENCRYPTED,
      { type: 'message', role: 'assistant', content: 'Let me look that up.' },
      { type: 'function_call', id: 'fc_68a1f0c2d4e9', call_id: 'call_weather', name: 'get_weather', arguments: '{"city":"Lisbon"}' },
      { type: 'function_call_output', call_id: 'call_weather', output: '18°C, clear' },
    ]);
    // OpenAI chat carries the round's text, never the reasoning.
    const chat = await replay(conversationId, { format: 'HISTORY_FORMAT_OPENAI_CHAT' });
    expect(roundsOf(chat)[0]).toMatchObject({ reasoning_omitted: 'REASONING_OMISSION_FORMAT_HAS_NONE', text: 'Let me look that up.' });
    expect(JSON.stringify(messagesOf(chat))).not.toContain('gAAAAAB');
  });
});
