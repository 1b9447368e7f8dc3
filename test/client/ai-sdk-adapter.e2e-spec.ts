import { APICallError, type ModelMessage, modelMessageSchema, stepCountIs, tool, ToolLoopAgent } from 'ai';
import { convertArrayToReadableStream, MockLanguageModelV3 } from 'ai/test';
import type { Admin } from 'kafkajs';
import { z } from 'zod';
import {
  ApprovalStatus,
  InvalidToolEventError,
  InvocationStatus,
  OmissionReason,
  ReasoningOmission,
  TRUNCATION_TAIL,
  ToolEventPublisher,
  ToolHistoryClient,
  type HistoryMessages,
  type Invocation,
  type ReplayHistory,
  type ToolEvent,
  type ToolEventType,
} from '../../libs/client/src';
import {
  pendingApprovalMessages,
  recordedGenerateText,
  recordedStreamText,
  toolApprovalResponse,
  toolHistoryCallbacks,
} from '../../libs/client/src/ai-sdk';
import { responseMessagesOf, thrownErrorText } from '../../libs/client/src/ai-sdk/sdk-versions.fixture';
import { testKafka } from '../support/kafka-fixtures';
import { HOUR_LONG_FRESHNESS, startClientStack, stopClientStack } from '../support/client-stack';
import type { RunningStack } from '../support/running-stack';
import { uniqueName } from '../support/test-environment';
import { waitFor } from '../support/wait-for';

type GenerateResult = Awaited<ReturnType<MockLanguageModelV3['doGenerate']>>;
type CallOptions = MockLanguageModelV3['doGenerateCalls'][number];
type StreamPart = Awaited<ReturnType<MockLanguageModelV3['doStream']>>['stream'] extends ReadableStream<infer P> ? P : never;

const MODEL_ID = 'scripted-model-2025';
const usage = ([input, output]: [number, number]) => ({
  inputTokens: { total: input, noCache: input, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: output, text: output, reasoning: undefined },
});

let responseNumber = 0;
/** One model response: tool calls (id, name, input) or a final text. */
function reply(
  answer: { toolCalls: Array<[id: string, name: string, input: object]> } | { text: string },
  tokens: [number, number],
): GenerateResult {
  return {
    content:
      'text' in answer
        ? [{ type: 'text', text: answer.text }]
        : answer.toolCalls.map(([toolCallId, toolName, input]) => ({
            type: 'tool-call',
            toolCallId,
            toolName,
            input: JSON.stringify(input),
          })),
    finishReason: 'text' in answer ? { unified: 'stop', raw: 'stop' } : { unified: 'tool-calls', raw: 'tool_calls' },
    usage: usage(tokens),
    response: { id: `resp-${++responseNumber}`, modelId: MODEL_ID, timestamp: new Date() },
    warnings: [],
  };
}

/**
 * The model: the SDK's own test double answering each call with the next
 * scripted response (or throwing the scripted error), after `beforeCall`.
 * Like a real provider, it refuses a call whose signal is aborted.
 */
function scriptedModel(script: Array<GenerateResult | Error>, beforeCall: () => Promise<void> = async () => undefined) {
  return new MockLanguageModelV3({
    modelId: MODEL_ID,
    doGenerate: async (options) => {
      options.abortSignal?.throwIfAborted();
      await beforeCall();
      const next = script.shift();
      if (next === undefined) throw new Error('the script has no response left');
      if (next instanceof Error) throw next;
      return next;
    },
  });
}

/** The agent's tools, real ones: weather as JSON, packing advice as text, flights always failing. */
const tools = {
  get_weather: tool({
    description: 'Current weather in a city',
    inputSchema: z.object({ city: z.string() }),
    execute: async ({ city }) => ({ city, tempC: city === 'Paris' ? 18 : 12, sky: 'rain' }),
  }),
  suggest_packing: tool({
    description: 'What to pack for these temperatures',
    inputSchema: z.object({ tempsC: z.array(z.number()) }),
    execute: async ({ tempsC }) => `umbrella and a scarf for ${tempsC.join(' and ')} °C`,
  }),
  search_flights: tool({
    description: 'Flights to a city',
    inputSchema: z.object({ to: z.string() }),
    execute: async ({ to }): Promise<string> => {
      throw new Error(`no flights to ${to}`);
    },
  }),
};

/** The tool-call and tool-result parts of a prompt the model received, in order. */
function toolParts(prompt: CallOptions['prompt']) {
  const calls = prompt.flatMap((m) => (m.role === 'assistant' ? m.content.filter((p) => p.type === 'tool-call') : []));
  const results = prompt.flatMap((m) => (m.role === 'tool' ? m.content.filter((p) => p.type === 'tool-result') : []));
  return {
    calls: calls.map((p) => [p.toolCallId, p.toolName, p.input]),
    results: results.map((p) => [p.toolCallId, p.toolName, p.output]),
  };
}

describe('@toolhistory/client/ai-sdk: AI SDK calls recorded through the real broker and the real service', () => {
  let stack: RunningStack;
  let publisher: ToolEventPublisher;
  let client: ToolHistoryClient;
  let admin: Admin;
  const tenantId = uniqueName('tenant');

  beforeAll(async () => {
    ({ stack, publisher, client } = await startClientStack('aisdk', HOUR_LONG_FRESHNESS));
    admin = testKafka().admin();
    await admin.connect();
  });

  afterAll(async () => {
    await admin?.disconnect();
    await stopClientStack({ stack, publisher, client });
  });

  const runOf = (conversationId: string, runId: string) => publisher.run({ tenantId, conversationId, channel: 'web', runId });

  /** Messages the broker holds on the topic: what has been acknowledged so far. */
  async function acknowledgedEvents(): Promise<number> {
    const offsets = await admin.fetchTopicOffsets(stack.topic);
    return offsets.reduce((total, partition) => total + Number(partition.high), 0);
  }

  /** The run's recorded event of `type`, as the service's subscription delivers it. */
  async function recordedEvent(type: ToolEventType, runId: string): Promise<ToolEvent> {
    for await (const recorded of client.subscribe({ tenantId, types: [type], signal: AbortSignal.timeout(30_000) })) {
      if (recorded.runId === runId) return recorded.event;
    }
    throw new Error(`no ${type} recorded for ${runId} within 30 s`);
  }

  /** Every recorded event of the run, in order, up to its RunCompleted or RunFailed, as the service's subscription delivers them. */
  async function eventsOfRun(runId: string): Promise<ToolEvent[]> {
    const events: ToolEvent[] = [];
    for await (const recorded of client.subscribe({ tenantId, signal: AbortSignal.timeout(30_000) })) {
      if (recorded.runId !== runId) continue;
      events.push(recorded.event);
      if (recorded.event.type === 'RunCompleted' || recorded.event.type === 'RunFailed') return events;
    }
    throw new Error(`${runId} did not end within 30 s`);
  }

  const replayUntil = (conversationId: string, done: (history: ReplayHistory<HistoryMessages['ai-sdk']>) => boolean, what: string) =>
    waitFor(() => client.getReplayHistory({ tenantId, conversationId, format: 'ai-sdk' }), done, { what });

  async function invocationsOf(conversationId: string, count: number): Promise<Invocation[]> {
    return waitFor(
      async () => {
        const found: Invocation[] = [];
        for await (const invocation of client.listToolInvocations({ tenantId, conversationId })) found.push(invocation);
        // The listing is ordered by time; the round's parallel calls may have started in either order.
        return found.sort((a, b) => a.roundIndex - b.roundIndex || a.sequenceIndex - b.sequenceIndex);
      },
      (found) => found.length === count && found.every((i) => i.status !== InvocationStatus.INVOCATION_STATUS_PENDING),
      { what: `${count} answered invocations in ${conversationId}` },
    );
  }

  it('records a two-round generateText turn, and the next turn sends the replayed tool calls and results to the model', async () => {
    const conversationId = uniqueName('conv');
    const before = await acknowledgedEvents();
    const acknowledgedAtModelCall: number[] = [];
    const model = scriptedModel(
      [
        reply(
          {
            toolCalls: [
              ['call_paris', 'get_weather', { city: 'Paris' }],
              ['call_berlin', 'get_weather', { city: 'Berlin' }],
            ],
          },
          [50, 20],
        ),
        reply({ toolCalls: [['call_pack', 'suggest_packing', { tempsC: [18, 12] }]] }, [90, 15]),
        reply({ text: 'Paris 18°C, Berlin 12°C, both rainy: take an umbrella and a scarf.' }, [130, 25]),
        // Turn 2.
        reply({ text: 'Paris was 18°C.' }, [200, 8]),
      ],
      async () => {
        acknowledgedAtModelCall.push((await acknowledgedEvents()) - before);
      },
    );

    // Turn 1, with the caller's own callbacks, which still run.
    const user1: ModelMessage = { role: 'user', content: 'Weather in Paris and Berlin, and what should I pack?' };
    const callerSaw: string[] = [];
    const turn1 = await recordedGenerateText(
      runOf(conversationId, 'turn-1'),
      {
        model,
        tools,
        messages: [user1],
        stopWhen: stepCountIs(5),
        onStepFinish: (step) => void callerSaw.push(`step ${step.stepNumber}`),
        onFinish: ({ steps }) => void callerSaw.push(`finish after ${steps.length} steps`),
      },
      { assistantMessageId: 'msg-a1' },
    );
    expect(turn1.text).toBe('Paris 18°C, Berlin 12°C, both rainy: take an umbrella and a scarf.');
    expect(callerSaw).toEqual(['step 0', 'step 1', 'step 2', 'finish after 3 steps']);
    // Each round (its calls and results) was acknowledged by the broker before the next model call; RunCompleted before the turn returned.
    expect(acknowledgedAtModelCall).toEqual([0, 2 + 2, 4 + 1 + 1]);
    expect((await acknowledgedEvents()) - before).toBe(7);

    const history = await replayUntil(conversationId, (h) => h.turns.some((t) => t.assistantMessageId === 'msg-a1'), 'turn 1 replayed');
    expect(history.omitted).toEqual([]);
    expect(history.turns.map((t) => [t.runId, t.rounds.map((r) => [r.roundIndex, r.calls.map((c) => c.toolCallId)])])).toEqual([
      [
        'turn-1',
        [
          [0, ['call_paris', 'call_berlin']],
          [1, ['call_pack']],
        ],
      ],
    ]);
    // The AI SDK's own schema accepts the replayed messages as they are.
    const replayed: ModelMessage[] = history.messages.map((message) => modelMessageSchema.parse(message));
    expect(replayed.map((m) => m.role)).toEqual(['assistant', 'tool', 'assistant', 'tool']);

    const completed = await recordedEvent('RunCompleted', 'turn-1');
    expect(completed).toMatchObject({
      finishReason: 'stop',
      assistantMessageId: 'msg-a1',
      usage: [
        { inputTokens: 50, outputTokens: 20, model: MODEL_ID },
        { inputTokens: 90, outputTokens: 15, model: MODEL_ID },
        { inputTokens: 130, outputTokens: 25, model: MODEL_ID },
      ],
    });
    const invocations = await invocationsOf(conversationId, 3);
    expect(invocations.map((i) => [i.roundIndex, i.sequenceIndex, i.toolCallId, i.status])).toEqual([
      [0, 0, 'call_paris', InvocationStatus.INVOCATION_STATUS_SUCCEEDED],
      [0, 1, 'call_berlin', InvocationStatus.INVOCATION_STATUS_SUCCEEDED],
      [1, 0, 'call_pack', InvocationStatus.INVOCATION_STATUS_SUCCEEDED],
    ]);
    expect(invocations.every((i) => i.durationMs !== undefined && Number(i.durationMs) >= 0)).toBe(true);

    // Turn 2: the user's message, the replayed tool segment, the turn's final answer, then the new question.
    const user2: ModelMessage = { role: 'user', content: 'And how warm was Paris?' };
    const turn2 = await recordedGenerateText(
      runOf(conversationId, 'turn-2'),
      { model, tools, messages: [user1, ...replayed, { role: 'assistant', content: turn1.text }, user2] },
      { assistantMessageId: 'msg-a2' },
    );
    expect(turn2.text).toBe('Paris was 18°C.');

    // What the model received in its turn-2 call, as the SDK handed it to the provider.
    const prompt = model.doGenerateCalls[3].prompt;
    expect(prompt.map((m) => m.role)).toEqual(['user', 'assistant', 'tool', 'assistant', 'tool', 'assistant', 'user']);
    const sent = toolParts(prompt);
    expect(sent.calls).toEqual([
      ['call_paris', 'get_weather', { city: 'Paris' }],
      ['call_berlin', 'get_weather', { city: 'Berlin' }],
      ['call_pack', 'suggest_packing', { tempsC: [18, 12] }],
    ]);
    expect(sent.results.map(([id, name]) => [id, name])).toEqual([
      ['call_paris', 'get_weather'],
      ['call_berlin', 'get_weather'],
      ['call_pack', 'suggest_packing'],
    ]);
    // Each result as the tool returned it in turn 1: JSON as its text, text as it is.
    const outputs = sent.results.map(([, , output]) => output as { type: string; value: string });
    expect(outputs.map((o) => o.type)).toEqual(['text', 'text', 'text']);
    expect(JSON.parse(outputs[0].value)).toEqual({ city: 'Paris', tempC: 18, sky: 'rain' });
    expect(JSON.parse(outputs[1].value)).toEqual({ city: 'Berlin', tempC: 12, sky: 'rain' });
    expect(outputs[2].value).toBe('umbrella and a scarf for 18 and 12 °C');

    // Turn 2 asked for no tool: a completed run without rounds.
    expect(await recordedEvent('RunCompleted', 'turn-2')).toMatchObject({
      finishReason: 'stop',
      assistantMessageId: 'msg-a2',
      usage: [{ inputTokens: 200, outputTokens: 8, model: MODEL_ID }],
    });
  });

  it('records a streamText run once the stream is consumed, its final response id as the assistant message id', async () => {
    const conversationId = uniqueName('conv');
    const meta = (id: string): StreamPart => ({ type: 'response-metadata', id, modelId: MODEL_ID, timestamp: new Date() });
    const model = new MockLanguageModelV3({
      modelId: MODEL_ID,
      doStream: [
        {
          stream: convertArrayToReadableStream<StreamPart>([
            { type: 'stream-start', warnings: [] },
            meta('resp-stream-1'),
            { type: 'tool-call', toolCallId: 'call_oslo', toolName: 'get_weather', input: '{"city":"Oslo"}' },
            { type: 'tool-call', toolCallId: 'call_pack_oslo', toolName: 'suggest_packing', input: '{"tempsC":[12]}' },
            { type: 'finish', finishReason: { unified: 'tool-calls', raw: 'tool_calls' }, usage: usage([40, 12]) },
          ]),
        },
        {
          stream: convertArrayToReadableStream<StreamPart>([
            { type: 'stream-start', warnings: [] },
            meta('resp-stream-2'),
            { type: 'text-start', id: 't1' },
            { type: 'text-delta', id: 't1', delta: 'Oslo: 12°C and rain, ' },
            { type: 'text-delta', id: 't1', delta: 'pack an umbrella.' },
            { type: 'text-end', id: 't1' },
            { type: 'finish', finishReason: { unified: 'stop', raw: 'stop' }, usage: usage([70, 9]) },
          ]),
        },
      ],
    });

    const result = recordedStreamText(runOf(conversationId, 'streamed'), {
      model,
      tools,
      prompt: 'Weather in Oslo, and what to pack?',
      stopWhen: stepCountIs(3),
    });
    let text = '';
    for await (const delta of result.textStream) text += delta;
    await result.recorded;
    expect(text).toBe('Oslo: 12°C and rain, pack an umbrella.');

    expect(await recordedEvent('RunCompleted', 'streamed')).toMatchObject({
      finishReason: 'stop',
      assistantMessageId: 'resp-stream-2',
      usage: [
        { inputTokens: 40, outputTokens: 12, model: MODEL_ID },
        { inputTokens: 70, outputTokens: 9, model: MODEL_ID },
      ],
    });
    const history = await replayUntil(conversationId, (h) => h.turns.length === 1, 'the streamed run replayed');
    expect(history.turns[0]).toMatchObject({ runId: 'streamed', assistantMessageId: 'resp-stream-2' });
    expect(history.messages.map((message) => modelMessageSchema.parse(message))).toEqual([
      {
        role: 'assistant',
        content: [
          { type: 'tool-call', toolCallId: 'call_oslo', toolName: 'get_weather', input: { city: 'Oslo' } },
          { type: 'tool-call', toolCallId: 'call_pack_oslo', toolName: 'suggest_packing', input: { tempsC: [12] } },
        ],
      },
      {
        role: 'tool',
        content: [
          { type: 'tool-result', toolCallId: 'call_oslo', toolName: 'get_weather', output: { type: 'text', value: expect.any(String) } },
          {
            type: 'tool-result',
            toolCallId: 'call_pack_oslo',
            toolName: 'suggest_packing',
            output: { type: 'text', value: 'umbrella and a scarf for 12 °C' },
          },
        ],
      },
    ]);
  });

  it('ends a run at its step limit with tool_limit: a tool error replays as error text, the trailing round does not replay', async () => {
    const conversationId = uniqueName('conv');
    const model = scriptedModel([
      reply(
        {
          toolCalls: [
            ['call_w', 'get_weather', { city: 'Paris' }],
            ['call_f', 'search_flights', { to: 'Oslo' }],
          ],
        },
        [40, 10],
      ),
      reply({ toolCalls: [['call_rome', 'get_weather', { city: 'Rome' }]] }, [60, 12]),
    ]);

    const result = await recordedGenerateText(
      runOf(conversationId, 'limited'),
      { model, tools, prompt: 'Plan a trip', stopWhen: stepCountIs(2) },
      { assistantMessageId: 'msg-limited' },
    );
    expect(result.steps).toHaveLength(2);
    expect(model.doGenerateCalls).toHaveLength(2);

    expect(await recordedEvent('RunCompleted', 'limited')).toMatchObject({ finishReason: 'tool_limit', assistantMessageId: 'msg-limited' });
    const history = await replayUntil(conversationId, (h) => h.turns.length === 1, 'the limited run replayed');
    expect(history.turns[0].rounds.map((r) => r.calls.map((c) => [c.toolCallId, c.isError]))).toEqual([
      [
        ['call_w', false],
        ['call_f', true],
      ],
    ]);
    const [, toolMessage] = history.messages.map((message) => modelMessageSchema.parse(message));
    expect(toolMessage).toEqual({
      role: 'tool',
      content: [
        expect.objectContaining({ toolCallId: 'call_w', output: { type: 'text', value: expect.any(String) } }),
        expect.objectContaining({
          toolCallId: 'call_f',
          output: { type: 'error-text', value: expect.stringMatching(thrownErrorText('no flights to Oslo')) },
        }),
      ],
    });
    expect(history.omitted).toEqual([
      expect.objectContaining({
        runId: 'limited',
        roundIndex: 1,
        toolCallId: 'call_rome',
        reason: OmissionReason.OMISSION_REASON_TRAILING_UNSENT,
      }),
    ]);
    // Still there for audit, the failed call as an error.
    const invocations = await invocationsOf(conversationId, 3);
    expect(invocations.map((i) => [i.roundIndex, i.toolCallId, i.status, i.result])).toEqual([
      [0, 'call_w', InvocationStatus.INVOCATION_STATUS_SUCCEEDED, expect.any(String)],
      [0, 'call_f', InvocationStatus.INVOCATION_STATUS_ERROR, expect.stringMatching(thrownErrorText('no flights to Oslo'))],
      [1, 'call_rome', InvocationStatus.INVOCATION_STATUS_SUCCEEDED, expect.any(String)],
    ]);
  });

  it('records an Agent run through the callbacks: onStepFinish per call, complete with its result', async () => {
    const conversationId = uniqueName('conv');
    const model = scriptedModel([
      reply({ toolCalls: [['call_agent', 'get_weather', { city: 'Paris' }]] }, [25, 5]),
      reply({ text: 'Paris: 18°C and rain.' }, [45, 7]),
    ]);
    const agent = new ToolLoopAgent({ model, tools, stopWhen: stepCountIs(5) });

    const recorder = toolHistoryCallbacks<typeof tools>(runOf(conversationId, 'agent-run'), {
      assistantMessageId: (f) => `answer:${f.text}`,
    });
    const result = await agent.generate({ prompt: 'Weather in Paris?', onStepFinish: recorder.onStepFinish });
    await recorder.complete(result);
    await recorder.recorded;

    expect(await recordedEvent('RunCompleted', 'agent-run')).toMatchObject({
      finishReason: 'stop',
      assistantMessageId: 'answer:Paris: 18°C and rain.',
      usage: [
        { inputTokens: 25, outputTokens: 5 },
        { inputTokens: 45, outputTokens: 7 },
      ],
    });
    const history = await replayUntil(conversationId, (h) => h.turns.length === 1, 'the agent run replayed');
    expect(history.turns[0].rounds.map((r) => r.calls.map((c) => [c.toolCallId, c.toolName, JSON.parse(c.argumentsJson)]))).toEqual([
      [['call_agent', 'get_weather', { city: 'Paris' }]],
    ]);
  });

  it('records RunFailed when the model call throws, rethrows the error, and replays nothing of the run', async () => {
    const conversationId = uniqueName('conv');
    const contextTooLong = new APICallError({
      message: 'This model maximum context length is exceeded',
      url: 'https://provider.invalid/v1/chat',
      requestBodyValues: {},
      statusCode: 400,
      isRetryable: false,
    });
    const model = scriptedModel([reply({ toolCalls: [['call_x', 'get_weather', { city: 'Lima' }]] }, [40, 10]), contextTooLong]);

    await expect(
      recordedGenerateText(runOf(conversationId, 'failing'), { model, tools, prompt: 'Weather in Lima?', stopWhen: stepCountIs(5) }),
    ).rejects.toBe(contextTooLong);

    expect(await recordedEvent('RunFailed', 'failing')).toMatchObject({
      error: { code: 'AI_APICallError', message: 'This model maximum context length is exceeded' },
    });
    // The round recorded before the failing call stays for audit.
    const [invocation] = await invocationsOf(conversationId, 1);
    expect(invocation).toMatchObject({ runId: 'failing', toolCallId: 'call_x', status: InvocationStatus.INVOCATION_STATUS_SUCCEEDED });
    const history = await client.getReplayHistory({ tenantId, conversationId, format: 'ai-sdk' });
    expect(history.messages).toEqual([]);
    expect(history.omitted).toEqual([
      expect.objectContaining({ runId: 'failing', toolCallId: 'call_x', reason: OmissionReason.OMISSION_REASON_RUN_FAILED }),
    ]);
  });

  it('records RunFailed when a streamed model call fails, and not the completion the SDK still reports', async () => {
    const conversationId = uniqueName('conv');
    const overloaded = new APICallError({
      message: 'Overloaded',
      url: 'https://provider.invalid/v1/messages',
      requestBodyValues: {},
      statusCode: 529,
      isRetryable: false,
    });
    let streamCalls = 0;
    const model = new MockLanguageModelV3({
      modelId: MODEL_ID,
      doStream: async () => {
        if (++streamCalls > 1) throw overloaded;
        return {
          stream: convertArrayToReadableStream<StreamPart>([
            { type: 'stream-start', warnings: [] },
            { type: 'tool-call', toolCallId: 'call_lima', toolName: 'get_weather', input: '{"city":"Lima"}' },
            { type: 'finish', finishReason: { unified: 'tool-calls', raw: 'tool_calls' }, usage: usage([30, 6]) },
          ]),
        };
      },
    });
    const callerErrors: unknown[] = [];
    let finishedSteps = 0;

    const result = recordedStreamText(runOf(conversationId, 'stream-failing'), {
      model,
      tools,
      prompt: 'Weather in Lima?',
      stopWhen: stepCountIs(5),
      maxRetries: 0,
      onError: ({ error }) => void callerErrors.push(error),
      onFinish: ({ steps }) => void (finishedSteps = steps.length),
    });
    const streamed = [];
    for await (const part of result.fullStream) if (part.type === 'error') streamed.push(part.error);
    await result.recorded;
    expect(streamed).toEqual([overloaded]);
    expect(callerErrors).toEqual([overloaded]);
    // The SDK still calls onFinish with the step before the error; the run's first end, RunFailed, stands.
    expect(finishedSteps).toBe(1);

    expect(await recordedEvent('RunFailed', 'stream-failing')).toMatchObject({ error: { code: 'AI_APICallError', message: 'Overloaded' } });
    const history = await replayUntil(conversationId, (h) => h.omitted.length === 1, 'the failed streamed run omitted');
    expect(history.messages).toEqual([]);
    expect(history.omitted).toEqual([
      expect.objectContaining({ runId: 'stream-failing', toolCallId: 'call_lima', reason: OmissionReason.OMISSION_REASON_RUN_FAILED }),
    ]);
  });

  it('records RunFailed as aborted when the caller aborts while a tool runs', async () => {
    const conversationId = uniqueName('conv');
    const stop = new AbortController();
    const model = scriptedModel([
      reply({ toolCalls: [['call_slow', 'get_stock', { sku: 'A-1' }]] }, [30, 5]),
      reply({ text: 'never' }, [1, 1]),
    ]);
    const stockTools = {
      // The user presses stop while the tool runs: the loop makes no further model call.
      get_stock: tool({
        inputSchema: z.object({ sku: z.string() }),
        execute: async () => {
          stop.abort();
          return { inStock: 3 };
        },
      }),
    };

    await expect(
      recordedGenerateText(runOf(conversationId, 'aborted'), {
        model,
        tools: stockTools,
        prompt: 'Is A-1 in stock?',
        stopWhen: stepCountIs(5),
        abortSignal: stop.signal,
      }),
    ).rejects.toMatchObject({ name: 'AbortError' });
    expect(model.doGenerateCalls).toHaveLength(1);

    expect(await recordedEvent('RunFailed', 'aborted')).toMatchObject({ error: { code: 'aborted' } });
  });

  it('makes no further model call once a step cannot be recorded, records the run as failed, and throws why', async () => {
    const conversationId = uniqueName('conv');
    // A name the contract refuses (over 256 characters): the call cannot be published.
    const model = scriptedModel([reply({ toolCalls: [['call_long', 'x'.repeat(300), {}]] }, [20, 5]), reply({ text: 'too late' }, [1, 1])]);

    await expect(
      recordedGenerateText(runOf(conversationId, 'unrecordable'), { model, tools, prompt: 'Anything', stopWhen: stepCountIs(5) }),
    ).rejects.toBeInstanceOf(InvalidToolEventError);
    expect(model.doGenerateCalls).toHaveLength(1);

    const failed = await recordedEvent('RunFailed', 'unrecordable');
    expect(failed).toMatchObject({ error: { code: 'recording_failed' } });
    expect(failed.type === 'RunFailed' && failed.error.message).toContain('toolName');
  });
  it("records a reasoning model's thinking with its round, and the run that resumes the turn sends it back as the model gave it", async () => {
    const conversationId = uniqueName('conv');
    const scope = (runId: string) => ({ publisher, scope: { tenantId, conversationId, channel: 'web', runId } });
    const thinking = { signature: 'EqQBCkgIARABGAIiQHx0', text: 'Paris first; the weather decides what to pack.' };
    const redacted = 'EmwKAhgBEgy3va3pzix/LafPsn4a';
    const model = new MockLanguageModelV3({
      provider: 'anthropic.messages',
      modelId: 'claude-sonnet-4-5',
      doGenerate: [
        {
          ...reply({ toolCalls: [['call_paris', 'get_weather', { city: 'Paris' }]] }, [40, 30]),
          response: { id: 'resp-thinking', modelId: 'claude-sonnet-4-5', timestamp: new Date() },
          content: [
            { type: 'reasoning', text: thinking.text, providerMetadata: { anthropic: { signature: thinking.signature } } },
            { type: 'reasoning', text: '', providerMetadata: { anthropic: { redactedData: redacted } } },
            { type: 'text', text: 'I will check the weather in Paris first.' },
            { type: 'tool-call', toolCallId: 'call_paris', toolName: 'get_weather', input: '{"city":"Paris"}' },
          ],
        },
        reply({ toolCalls: [['call_pack', 'suggest_packing', { tempsC: [18] }]] }, [70, 10]),
        reply({ text: 'Paris is 18°C and rainy: take an umbrella.' }, [90, 12]),
      ],
    });
    const question: ModelMessage = { role: 'user', content: 'What should I pack for Paris?' };

    // Run 1 reaches its step limit after two rounds, without an answer: the turn goes on.
    await recordedGenerateText(
      scope('run-1'),
      { model, tools, messages: [question], stopWhen: stepCountIs(2) },
      { userMessageId: 'u-paris' },
    );
    const events = await eventsOfRun('run-1');
    expect(events.map((e) => e.type)).toEqual([
      'ModelResponseReceived',
      'ToolCallRequested',
      'ToolResultReceived',
      'ToolCallRequested',
      'ToolResultReceived',
      'RunCompleted',
    ]);
    expect(events[0]).toMatchObject({
      roundIndex: 0,
      provider: 'anthropic',
      model: 'claude-sonnet-4-5',
      text: 'I will check the weather in Paris first.',
    });

    // Run 2 goes on with the round whose results reached the model (the last one's did not), asking for the provider and model it calls.
    const history = await waitFor(
      () => client.getReplayHistory({ tenantId, conversationId, format: 'ai-sdk', provider: 'anthropic', model: 'claude-sonnet-4-5' }),
      (h) => h.turns.some((t) => t.rounds.some((r) => r.reasoningJson !== '')),
      { what: "run 1's round replayed with its reasoning" },
    );
    const replayed: ModelMessage[] = history.messages.map((message) => modelMessageSchema.parse(message));
    await recordedGenerateText(scope('run-2'), { model, tools, messages: [question, ...replayed] }, { userMessageId: 'u-paris' });

    // What the model received in run 2, as the SDK handed it to the provider: the same parts as the SDK itself would have sent in run 1.
    const [, assistant] = model.doGenerateCalls[2].prompt;
    // The SDK's own second request in run 1 carried the same parts.
    expect(model.doGenerateCalls[1].prompt[1]).toEqual(assistant);
    expect(assistant).toEqual({
      role: 'assistant',
      content: [
        { type: 'reasoning', text: thinking.text, providerOptions: { anthropic: { signature: thinking.signature } } },
        { type: 'reasoning', text: '', providerOptions: { anthropic: { redactedData: redacted } } },
        { type: 'text', text: 'I will check the weather in Paris first.' },
        expect.objectContaining({ type: 'tool-call', toolCallId: 'call_paris', toolName: 'get_weather', input: { city: 'Paris' } }),
      ],
    });

    // Another model of the provider gets the round without its reasoning, and says why; so does a replay that names no provider.
    const otherModel = await client.getReplayHistory({
      tenantId,
      conversationId,
      format: 'ai-sdk',
      provider: 'anthropic',
      model: 'claude-opus-4-1',
    });
    expect(otherModel.turns[0].rounds[0]).toMatchObject({
      reasoningJson: '',
      reasoningOmitted: ReasoningOmission.REASONING_OMISSION_OTHER_MODEL,
    });
    expect(otherModel.messages[0].content.map((part) => part.type)).toEqual(['text', 'tool-call']);
    const noProvider = await client.getReplayHistory({ tenantId, conversationId, format: 'ai-sdk' });
    expect(noProvider.turns[0].rounds[0].reasoningOmitted).toBe(ReasoningOmission.REASONING_OMISSION_FORMAT_HAS_NONE);
  });

  // @ai-sdk/google keeps Gemini's signatures under `google`; @ai-sdk/google-vertex, the same API through Vertex, under `vertex`.
  it.each([
    ['google.generative-ai', 'google'],
    ['google.vertex.chat', 'vertex'],
  ])(
    "records a Gemini-style round's thought part and the signature on its first call (%s, metadata under %s), and the next run sends the call signed",
    async (providerId, key) => {
      const conversationId = uniqueName('conv');
      const scope = (runId: string) => ({ publisher, scope: { tenantId, conversationId, channel: 'web', runId } });
      const model = new MockLanguageModelV3({
        provider: providerId,
        modelId: 'gemini-3-pro-preview',
        doGenerate: [
          {
            ...reply({ toolCalls: [] }, [40, 30]),
            response: { id: 'resp-gemini', modelId: 'gemini-3-pro-preview', timestamp: new Date() },
            content: [
              { type: 'reasoning', text: 'Both cities at once.' },
              {
                type: 'tool-call',
                toolCallId: 'fn_paris',
                toolName: 'get_weather',
                input: '{"city":"Paris"}',
                providerMetadata: { [key]: { thoughtSignature: 'CiQB0e2Kb8paris' } },
              },
              { type: 'tool-call', toolCallId: 'fn_berlin', toolName: 'get_weather', input: '{"city":"Berlin"}' },
            ],
          },
          reply({ toolCalls: [['fn_pack', 'suggest_packing', { tempsC: [18, 12] }]] }, [70, 10]),
          reply({ text: 'Take an umbrella.' }, [90, 12]),
        ],
      });
      const question: ModelMessage = { role: 'user', content: 'Paris and Berlin: what should I pack?' };
      await recordedGenerateText(
        scope('run-1'),
        { model, tools, messages: [question], stopWhen: stepCountIs(2) },
        { userMessageId: 'u-cities' },
      );
      await eventsOfRun('run-1');

      const history = await waitFor(
        () => client.getReplayHistory({ tenantId, conversationId, format: 'ai-sdk', provider: providerId, model: 'gemini-3-pro-preview' }),
        (h) => h.turns.some((t) => t.rounds.some((r) => r.reasoningJson !== '')),
        { what: "run 1's round replayed with its signature" },
      );
      const replayed: ModelMessage[] = history.messages.map((message) => modelMessageSchema.parse(message));
      await recordedGenerateText(scope('run-2'), { model, tools, messages: [question, ...replayed] }, { userMessageId: 'u-cities' });

      // The model's request in run 2 is the one the SDK itself made in run 1: the thought part, then the calls, only the first signed.
      const [, assistant] = model.doGenerateCalls[2].prompt;
      expect(assistant).toEqual(model.doGenerateCalls[1].prompt[1]);
      expect(assistant).toEqual({
        role: 'assistant',
        content: [
          { type: 'reasoning', text: 'Both cities at once.' },
          expect.objectContaining({
            type: 'tool-call',
            toolCallId: 'fn_paris',
            providerOptions: { [key]: { thoughtSignature: 'CiQB0e2Kb8paris' } },
          }),
          expect.not.objectContaining({ providerOptions: expect.anything() }),
        ],
      });
    },
  );

  describe('tools that need approval (needsApproval)', () => {
    const approvalTools = {
      ...tools,
      refund: tool({
        description: 'Refunds an order; a person approves first',
        inputSchema: z.object({ orderId: z.string(), amount: z.number() }),
        needsApproval: true,
        execute: async ({ orderId, amount }) => `refunded ${amount} EUR for ${orderId}`,
      }),
    };
    const approvalReason = ({ input }: { input: unknown }) => `refund of ${(input as { amount: number }).amount} EUR`;
    const question: ModelMessage = { role: 'user', content: 'Refund order A-1, it rained all week' };
    /** The host keeps its messages as JSON, as a store does (and so the SDK revalidates approved input on plain objects). */
    const stored = (messages: readonly ModelMessage[]): ModelMessage[] => JSON.parse(JSON.stringify(messages)) as ModelMessage[];
    const scopeOf = (conversationId: string, runId: string) => ({ publisher, scope: { tenantId, conversationId, channel: 'web', runId } });

    /** Run 1: the weather, then a refund that needs approval; the call ends awaiting it. The host's UI messages carry ids. */
    async function askForRefund(conversationId: string, runId: string, model: MockLanguageModelV3) {
      const result = await recordedGenerateText(
        scopeOf(conversationId, runId),
        { model, tools: approvalTools, messages: [question], stopWhen: stepCountIs(5) },
        { uiMessages: [{ id: 'ui-user-1', role: 'user' }], approvalReason },
      );
      const request = result.content.find((part) => part.type === 'tool-approval-request');
      if (request?.type !== 'tool-approval-request') throw new Error('the call did not end awaiting approval');
      expect(request.toolCall).toMatchObject({ toolCallId: 'call_refund', toolName: 'refund' });
      return { host: stored([question, ...responseMessagesOf(result)]), approvalId: request.approvalId };
    }

    /** The model: asks for the weather, then for the refund; then answers `text` in the run that resumes. */
    const refundModel = (text: string) =>
      scriptedModel([
        reply({ toolCalls: [['call_w', 'get_weather', { city: 'Paris' }]] }, [30, 6]),
        reply({ toolCalls: [['call_refund', 'refund', { orderId: 'A-1', amount: 20 }]] }, [50, 8]),
        reply({ text }, [80, 5]),
      ]);

    /** The call the replay gives back for `toolCallId`, wherever it sits. */
    const replayedCall = (history: ReplayHistory<HistoryMessages['ai-sdk']>, toolCallId: string) =>
      history.turns.flatMap((t) => t.rounds.flatMap((r) => r.calls)).find((c) => c.toolCallId === toolCallId);

    describe('approved in a later run, from the messages the host kept', () => {
      const conversationId = uniqueName('conv');
      const model = refundModel('Refunded 20 EUR.');
      let asked: ToolEvent[];
      let resumed: ToolEvent[];

      beforeAll(async () => {
        const { host, approvalId } = await askForRefund(conversationId, 'run-ask', model);
        asked = await eventsOfRun('run-ask');
        // The person approves; the host's next call carries the answer, and the SDK runs the refund before its model call.
        const approved = await recordedGenerateText(
          scopeOf(conversationId, 'run-resume'),
          {
            model,
            tools: approvalTools,
            messages: [
              ...host,
              { role: 'tool', content: [{ type: 'tool-approval-response', approvalId, approved: true, reason: 'loyal customer' }] },
            ],
            stopWhen: stepCountIs(5),
          },
          { decidedBy: 'desk-3', assistantMessageId: 'msg-refunded' },
        );
        expect(approved.text).toBe('Refunded 20 EUR.');
        resumed = await eventsOfRun('run-resume');
      });

      it('records the request in the run that asked, and the decision and the result in the run that resumed, with the ids of the call', () => {
        expect(asked.map((e) => [e.type, 'toolCallId' in e ? e.toolCallId : undefined])).toEqual([
          ['ToolCallRequested', 'call_w'],
          ['ToolResultReceived', 'call_w'],
          ['ToolCallRequested', 'call_refund'],
          ['ToolApprovalRequested', 'call_refund'],
          ['RunCompleted', undefined],
        ]);
        expect(asked[3]).toMatchObject({ roundIndex: 1, sequenceIndex: 0, reason: 'refund of 20 EUR' });
        // The run ended before the refund ran: its last round did not reach the model.
        expect(asked[4]).toMatchObject({ finishReason: 'tool_limit' });
        expect(asked.map((e) => e.userMessageId)).toEqual(Array(asked.length).fill('ui-user-1'));

        expect(toolParts(model.doGenerateCalls[2].prompt).results.at(-1)).toEqual([
          'call_refund',
          'refund',
          { type: 'text', value: 'refunded 20 EUR for A-1' },
        ]);
        expect(resumed).toEqual([
          expect.objectContaining({
            type: 'ToolApprovalDecided',
            toolCallId: 'call_refund',
            roundIndex: 1,
            sequenceIndex: 0,
            approved: true,
            reason: 'loyal customer',
            decidedBy: 'desk-3',
          }),
          expect.objectContaining({
            type: 'ToolResultReceived',
            toolCallId: 'call_refund',
            roundIndex: 1,
            sequenceIndex: 0,
            result: 'refunded 20 EUR for A-1',
            isError: false,
          }),
          expect.objectContaining({ type: 'RunCompleted', finishReason: 'stop', assistantMessageId: 'msg-refunded' }),
        ]);
      });

      it("lists the call as approved and answered by the later run's result, and replays it in that run", async () => {
        const invocations = await invocationsOf(conversationId, 2);
        expect(invocations.map((i) => [i.toolCallId, i.runId, i.status, i.approval])).toEqual([
          ['call_w', 'run-ask', InvocationStatus.INVOCATION_STATUS_SUCCEEDED, ApprovalStatus.APPROVAL_STATUS_NONE],
          ['call_refund', 'run-ask', InvocationStatus.INVOCATION_STATUS_SUCCEEDED, ApprovalStatus.APPROVAL_STATUS_APPROVED],
        ]);
        expect(invocations[1]).toMatchObject({
          result: 'refunded 20 EUR for A-1',
          resultRunId: 'run-resume',
          approvalDecidedBy: 'desk-3',
          approvalRequestReason: 'refund of 20 EUR',
          approvalDecisionReason: 'loyal customer',
        });
        const history = await replayUntil(conversationId, (h) => h.turns.some((t) => t.runId === 'run-resume'), 'the resumed run replayed');
        expect(history.pendingApprovals).toEqual([]);
        const resumedTurn = history.turns.find((t) => t.runId === 'run-resume')!;
        expect(resumedTurn.rounds).toEqual([
          expect.objectContaining({
            resumedFromRunId: 'run-ask',
            calls: [
              expect.objectContaining({
                toolCallId: 'call_refund',
                result: 'refunded 20 EUR for A-1',
                isError: false,
                approval: ApprovalStatus.APPROVAL_STATUS_APPROVED,
              }),
            ],
          }),
        ]);
        expect(resumedTurn.messages.map((message) => modelMessageSchema.parse(message).role)).toEqual(['assistant', 'tool']);
      });
    });

    describe('denied in a later run', () => {
      const conversationId = uniqueName('conv');
      const model = refundModel('I will not refund it.');
      let denied: ToolEvent[];

      beforeAll(async () => {
        const { host, approvalId } = await askForRefund(conversationId, 'run-ask-2', model);
        const answer: ModelMessage = {
          role: 'tool',
          content: [{ type: 'tool-approval-response', approvalId, approved: false, reason: 'over the weekly limit' }],
        };
        await recordedGenerateText(scopeOf(conversationId, 'run-deny'), {
          model,
          tools: approvalTools,
          messages: [...host, answer],
          stopWhen: stepCountIs(5),
        });
        denied = await eventsOfRun('run-deny');
      });

      it('records the decision with the ids of the call, and no result: the model was told it was denied', () => {
        expect(toolParts(model.doGenerateCalls[2].prompt).results.at(-1)).toEqual([
          'call_refund',
          'refund',
          { type: 'execution-denied', reason: 'over the weekly limit' },
        ]);
        expect(denied).toEqual([
          expect.objectContaining({
            type: 'ToolApprovalDecided',
            toolCallId: 'call_refund',
            roundIndex: 1,
            sequenceIndex: 0,
            approved: false,
            reason: 'over the weekly limit',
          }),
          expect.objectContaining({ type: 'RunCompleted', finishReason: 'stop' }),
        ]);
      });

      it('replays the denied call with an error result that says it was denied', async () => {
        const history = await replayUntil(conversationId, (h) => replayedCall(h, 'call_refund') !== undefined, 'the denied call replayed');
        expect(history.pendingApprovals).toEqual([]);
        expect(replayedCall(history, 'call_refund')).toMatchObject({
          isError: true,
          approval: ApprovalStatus.APPROVAL_STATUS_DENIED,
          result: expect.stringMatching(/denied/i),
        });
      });
    });

    it('lists a waiting call in pendingApprovals; a host that keeps no tool messages answers the replayed request, recorded with the ids of the call', async () => {
      const conversationId = uniqueName('conv');
      const model = refundModel('Refunded 20 EUR.');
      await askForRefund(conversationId, 'run-ask-3', model);

      // The replay leaves the waiting call out of the turns and lists it to ask again.
      const waiting = await replayUntil(conversationId, (h) => h.pendingApprovals.length === 1, 'the refund awaiting approval');
      expect(waiting.pendingApprovals).toEqual([
        expect.objectContaining({
          toolCallId: 'call_refund',
          toolName: 'refund',
          runId: 'run-ask-3',
          reason: 'refund of 20 EUR',
          roundIndex: 1,
          sequenceIndex: 0,
        }),
      ]);
      expect(JSON.parse(waiting.pendingApprovals[0].argumentsJson)).toEqual({ orderId: 'A-1', amount: 20 });
      expect(waiting.omitted).toContainEqual(
        expect.objectContaining({ toolCallId: 'call_refund', reason: OmissionReason.OMISSION_REASON_AWAITING_APPROVAL }),
      );
      expect(replayedCall(waiting, 'call_refund')).toBeUndefined();

      // The replayed request as the SDK wants it back, after the replayed turns, answered yes.
      const [pending] = waiting.pendingApprovals;
      const messages = [
        question,
        ...waiting.messages,
        ...pendingApprovalMessages(waiting.pendingApprovals),
        { role: 'tool', content: [toolApprovalResponse(pending, { approved: true })] },
      ].map((message) => modelMessageSchema.parse(message));
      const approved = await recordedGenerateText(scopeOf(conversationId, 'run-resume-3'), {
        model,
        tools: approvalTools,
        messages,
        stopWhen: stepCountIs(5),
      });

      expect(approved.text).toBe('Refunded 20 EUR.');
      expect(await eventsOfRun('run-resume-3')).toEqual([
        expect.objectContaining({
          type: 'ToolApprovalDecided',
          toolCallId: 'call_refund',
          roundIndex: 1,
          sequenceIndex: 0,
          approved: true,
        }),
        expect.objectContaining({ type: 'ToolResultReceived', toolCallId: 'call_refund', roundIndex: 1, sequenceIndex: 0 }),
        expect.objectContaining({ type: 'RunCompleted', finishReason: 'stop' }),
      ]);
    });
    it("resumes a Claude-style round with thinking from the replay's pending approval: the model gets its thinking and text back before the call", async () => {
      const conversationId = uniqueName('conv');
      const thinking = { signature: 'EqQBCkgIARABGAIiQrefund', text: 'A week of rain: the refund is fair.' };
      const model = new MockLanguageModelV3({
        provider: 'anthropic.messages',
        modelId: 'claude-sonnet-4-5',
        doGenerate: [
          {
            ...reply({ toolCalls: [] }, [50, 30]),
            response: { id: 'resp-refund', modelId: 'claude-sonnet-4-5', timestamp: new Date() },
            content: [
              { type: 'reasoning', text: thinking.text, providerMetadata: { anthropic: { signature: thinking.signature } } },
              { type: 'text', text: 'I will refund it once approved.' },
              { type: 'tool-call', toolCallId: 'call_refund', toolName: 'refund', input: '{"orderId":"A-1","amount":20}' },
            ],
          },
          reply({ text: 'Refunded 20 EUR.' }, [80, 5]),
        ],
      });
      await recordedGenerateText(
        scopeOf(conversationId, 'run-ask-4'),
        { model, tools: approvalTools, messages: [question], stopWhen: stepCountIs(5) },
        { userMessageId: 'u-refund', approvalReason },
      );
      const { provider, modelId } = model;
      const waiting = await waitFor(
        () => client.getReplayHistory({ tenantId, conversationId, format: 'ai-sdk', provider, model: modelId }),
        (h) => h.pendingApprovals.length === 1,
        { what: 'the refund awaiting approval' },
      );
      expect(waiting.pendingApprovals[0].round).toMatchObject({ provider: 'anthropic', text: 'I will refund it once approved.' });

      const [pending] = waiting.pendingApprovals;
      const messages = [
        question,
        ...waiting.messages,
        ...pendingApprovalMessages(waiting.pendingApprovals, provider),
        { role: 'tool', content: [toolApprovalResponse(pending, { approved: true })] },
      ].map((message) => modelMessageSchema.parse(message));
      const approved = await recordedGenerateText(
        scopeOf(conversationId, 'run-resume-4'),
        { model, tools: approvalTools, messages, stopWhen: stepCountIs(5) },
        { userMessageId: 'u-refund' },
      );

      expect(approved.text).toBe('Refunded 20 EUR.');
      // The resumed request carries the round as the model made it: its thinking (signature intact), its text, then the call.
      const assistant = model.doGenerateCalls[1].prompt.find((m) => m.role === 'assistant');
      expect(assistant?.content).toEqual([
        { type: 'reasoning', text: thinking.text, providerOptions: { anthropic: { signature: thinking.signature } } },
        { type: 'text', text: 'I will refund it once approved.' },
        expect.objectContaining({
          type: 'tool-call',
          toolCallId: 'call_refund',
          toolName: 'refund',
          input: { orderId: 'A-1', amount: 20 },
        }),
      ]);
    });
  });

  it('completes a turn whose tool returns 3 MB: the recorded result is cut with the truncation marker, and its original size is listed', async () => {
    const conversationId = uniqueName('conv');
    const page = 'All work and no play makes Jack a dull boy. '.repeat(70_000);
    expect(Buffer.byteLength(page)).toBeGreaterThan(3_000_000);
    const model = scriptedModel([
      reply({ toolCalls: [['call_page', 'fetch_page', { url: 'https://example.com/long' }]] }, [20, 5]),
      reply({ text: 'It is a long page.' }, [900_000, 6]),
    ]);
    const pageTools = { fetch_page: tool({ inputSchema: z.object({ url: z.string() }), execute: async () => page }) };

    const result = await recordedGenerateText(runOf(conversationId, 'run-page'), {
      model,
      tools: pageTools,
      prompt: 'Read it',
      stopWhen: stepCountIs(3),
    });

    expect(result.text).toBe('It is a long page.');
    // The model got the whole page; the record keeps what fits.
    expect(toolParts(model.doGenerateCalls[1].prompt).results[0][2]).toEqual({ type: 'text', value: page });
    const recorded = (await eventsOfRun('run-page')).find((e) => e.type === 'ToolResultReceived')!;
    expect(recorded.type === 'ToolResultReceived' && recorded.result).toMatch(TRUNCATION_TAIL);
    expect(recorded).toMatchObject({ originalBytes: Buffer.byteLength(JSON.stringify(page)) });
    const [invocation] = await invocationsOf(conversationId, 1);
    expect(invocation.result).toMatch(TRUNCATION_TAIL);
    expect(invocation.resultOriginalBytes).toBe(String(Buffer.byteLength(JSON.stringify(page))));
  });
});
