import { APICallError, type ModelMessage, modelMessageSchema, stepCountIs, tool, ToolLoopAgent } from 'ai';
import { convertArrayToReadableStream, MockLanguageModelV3 } from 'ai/test';
import type { Admin } from 'kafkajs';
import { z } from 'zod';
import {
  InvalidToolEventError,
  InvocationStatus,
  OmissionReason,
  ToolEventPublisher,
  ToolHistoryClient,
  type HistoryMessages,
  type Invocation,
  type ReplayHistory,
  type ToolEvent,
  type ToolEventType,
} from '../../libs/client/src';
import { recordedGenerateText, recordedStreamText, toolHistoryCallbacks } from '../../libs/client/src/ai-sdk';
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
        expect.objectContaining({ toolCallId: 'call_f', output: { type: 'error-text', value: 'no flights to Oslo' } }),
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
      [0, 'call_f', InvocationStatus.INVOCATION_STATUS_ERROR, 'no flights to Oslo'],
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
});
