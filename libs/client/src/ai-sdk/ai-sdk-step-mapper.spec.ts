import { generateText, stepCountIs, tool, type ToolSet } from 'ai';
import { MockLanguageModelV3 } from 'ai/test';
import { z } from 'zod';
import { Round } from '../generated/toolhistory/v1/toolhistory';
import { toAiSdkMessages } from '../history-formats';
import { MAX_FAILURE_MESSAGE_LENGTH, runFailure, runFinishReason, stepInvocations, stepReasoning, stepUsage } from './ai-sdk-step-mapper';
import { thrownErrorText } from './sdk-versions.fixture';

// Real steps from the SDK's own loop, driven by its scripted test model: the mapping reads the shapes the SDK really builds.
type ModelResponse = Awaited<ReturnType<MockLanguageModelV3['doGenerate']>>;

const usage = (input: number | undefined, output: number | undefined) => ({
  inputTokens: { total: input, noCache: input, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: output, text: output, reasoning: undefined },
});
const calls = (...list: Array<[id: string, name: string, input: string | object]>): ModelResponse => ({
  content: list.map(([toolCallId, toolName, input]) => ({
    type: 'tool-call' as const,
    toolCallId,
    toolName,
    input: typeof input === 'string' ? input : JSON.stringify(input),
  })),
  finishReason: { unified: 'tool-calls', raw: 'tool_calls' },
  usage: usage(10, 4),
  warnings: [],
});
const answer = (text: string): ModelResponse => ({
  content: [{ type: 'text', text }],
  finishReason: { unified: 'stop', raw: 'stop' },
  usage: usage(30, 9),
  warnings: [],
});

async function stepsOf(responses: ModelResponse[], tools: ToolSet, maxSteps = 10) {
  const model = new MockLanguageModelV3({ modelId: 'scripted', doGenerate: responses });
  const result = await generateText({ model, tools, prompt: 'go', stopWhen: stepCountIs(maxSteps) });
  return result.steps;
}

const tools = {
  get_weather: tool({
    inputSchema: z.object({ city: z.string() }),
    execute: async ({ city }) => ({ city, celsius: city === 'Oslo' ? 4 : 21, at: new Date('2025-01-02T03:04:05Z') }),
  }),
  get_time: tool({ inputSchema: z.object({ zone: z.string() }), execute: async () => '12:00' }),
  broken: tool({
    inputSchema: z.object({}),
    execute: async (): Promise<string> => {
      throw new Error('upstream said no');
    },
  }),
  silent: tool({ inputSchema: z.object({}), execute: async () => undefined }),
  summarized: tool({
    inputSchema: z.object({}),
    execute: async () => ({ rows: [1, 2, 3] }),
    toModelOutput: ({ output }) => ({ type: 'text', value: `${output.rows.length} rows` }),
  }),
  ask_human: tool({ inputSchema: z.object({ question: z.string() }) }),
};

describe('stepInvocations', () => {
  it('maps a step of parallel calls to one round in the model order, each with the result the model was sent', async () => {
    const [step] = await stepsOf(
      [calls(['c1', 'get_weather', { city: 'Oslo' }], ['c2', 'get_time', { zone: 'CET' }], ['c3', 'broken', {}]), answer('done')],
      tools,
    );

    expect(stepInvocations(step)).toEqual([
      {
        sequenceIndex: 0,
        toolCallId: 'c1',
        toolName: 'get_weather',
        arguments: { city: 'Oslo' },
        // JSON as it goes over the wire: the Date is the string the model saw.
        result: { value: { city: 'Oslo', celsius: 4, at: '2025-01-02T03:04:05.000Z' }, isError: false },
      },
      { sequenceIndex: 1, toolCallId: 'c2', toolName: 'get_time', arguments: { zone: 'CET' }, result: { value: '12:00', isError: false } },
      {
        sequenceIndex: 2,
        toolCallId: 'c3',
        toolName: 'broken',
        arguments: {},
        result: { value: expect.stringMatching(thrownErrorText('upstream said no')), isError: true },
      },
    ]);
  });

  it("records what the model saw: a tool's toModelOutput, and an empty result as null", async () => {
    const [step] = await stepsOf([calls(['s1', 'summarized', {}], ['s2', 'silent', {}]), answer('ok')], tools);

    expect(stepInvocations(step).map((invocation) => invocation.result)).toEqual([
      { value: '3 rows', isError: false },
      { value: 'null', isError: false },
    ]);
  });

  it('records a call to an unknown tool and an unparsable call with the SDK error the model was sent', async () => {
    const [step] = await stepsOf([calls(['u1', 'no_such_tool', { a: 1 }], ['u2', 'get_time', '{"zone": ']), answer('sorry')], tools);

    const [unknown, unparsable] = stepInvocations(step);
    expect(unknown).toMatchObject({ toolName: 'no_such_tool', arguments: { a: 1 }, result: { isError: true } });
    expect(unknown.result?.value).toContain('no_such_tool');
    // The model's text, kept for audit as the package's other adapters keep it.
    expect(unparsable).toMatchObject({ toolName: 'get_time', arguments: { _raw: '{"zone": ' }, result: { isError: true } });
  });

  it('keeps input and results nested deeper than the contract allows as their JSON text', async () => {
    let deep: object = { leaf: true };
    for (let i = 0; i < 70; i++) deep = { next: deep };
    const echo = tool({ inputSchema: z.looseObject({}), execute: async (input: object) => input });
    const [step] = await stepsOf([calls(['d1', 'echo', deep]), answer('deep')], { echo });

    const [invocation] = stepInvocations(step);
    expect(invocation.arguments).toEqual({ _raw: JSON.stringify(deep) });
    expect(invocation.result).toEqual({ value: JSON.stringify(deep), isError: false });
  });

  it('leaves a call without a result when the loop ended before the tool ran', async () => {
    const [step] = await stepsOf([calls(['h1', 'ask_human', { question: 'which one?' }])], tools);

    expect(stepInvocations(step)).toEqual([
      { sequenceIndex: 0, toolCallId: 'h1', toolName: 'ask_human', arguments: { question: 'which one?' } },
    ]);
  });

  it('leaves out calls the provider executed itself, and a step without tools has none', async () => {
    const providerSearch: ModelResponse = {
      content: [
        { type: 'tool-call', toolCallId: 'p1', toolName: 'web_search', input: '{"q":"x"}', providerExecuted: true },
        { type: 'tool-result', toolCallId: 'p1', toolName: 'web_search', result: { hits: 1 } },
        { type: 'text', text: 'found it' },
      ],
      finishReason: { unified: 'stop', raw: 'stop' },
      usage: usage(5, 5),
      warnings: [],
    };
    const [step] = await stepsOf([providerSearch], tools);

    expect(step.toolCalls).toHaveLength(1);
    expect(stepInvocations(step)).toEqual([]);
  });

  it('numbers the calls of a later step from 0 again, even when the provider reuses ids across steps', async () => {
    const steps = await stepsOf(
      [calls(['same', 'get_time', { zone: 'UTC' }]), calls(['same', 'get_weather', { city: 'Rome' }]), answer('ok')],
      tools,
    );

    expect(stepInvocations(steps[1])).toEqual([
      {
        sequenceIndex: 0,
        toolCallId: 'same',
        toolName: 'get_weather',
        arguments: { city: 'Rome' },
        result: { value: { city: 'Rome', celsius: 21, at: '2025-01-02T03:04:05.000Z' }, isError: false },
      },
    ]);
  });
});

describe('runFinishReason', () => {
  it("is 'stop' when the model answered after the last round's results", async () => {
    expect(runFinishReason(await stepsOf([calls(['a', 'get_time', { zone: 'UTC' }]), answer('noon')], tools))).toBe('stop');
    expect(runFinishReason(await stepsOf([answer('no tools needed')], tools))).toBe('stop');
  });

  it("is 'tool_limit' when a stop condition ended the loop right after executing tools", async () => {
    const steps = await stepsOf([calls(['a', 'get_time', { zone: 'UTC' }]), calls(['b', 'get_time', { zone: 'CET' }])], tools, 2);

    expect(steps).toHaveLength(2);
    expect(runFinishReason(steps)).toBe('tool_limit');
  });

  it("is 'tool_limit' too when the loop ended before its tools ran", async () => {
    expect(runFinishReason(await stepsOf([calls(['h', 'ask_human', { question: 'why?' }])], tools))).toBe('tool_limit');
  });
});

describe('stepUsage', () => {
  it('gives one entry per model call, with the model that answered, counting unreported tokens as 0', async () => {
    const noCounts: ModelResponse = { ...answer('fine'), usage: usage(undefined, undefined) };
    const steps = await stepsOf([calls(['a', 'get_time', { zone: 'UTC' }]), noCounts], tools);

    expect(stepUsage(steps)).toEqual([
      { inputTokens: 10, outputTokens: 4, model: 'scripted' },
      { inputTokens: 0, outputTokens: 0, model: 'scripted' },
    ]);
  });
});

describe('runFailure', () => {
  it("codes an abort as 'aborted' and anything else by its error name", () => {
    expect(runFailure(new DOMException('This operation was aborted', 'AbortError'))).toEqual({
      code: 'aborted',
      message: 'This operation was aborted',
    });
    const apiError = Object.assign(new Error('429 Too Many Requests'), { name: 'AI_APICallError' });
    expect(runFailure(apiError)).toEqual({ code: 'AI_APICallError', message: '429 Too Many Requests' });
    expect(runFailure('just a string')).toEqual({ code: 'error', message: 'just a string' });
    expect(runFailure({ status: 500 })).toEqual({ code: 'error', message: '{"status":500}' });
    expect(runFailure(undefined)).toEqual({ code: 'error', message: 'unknown error' });
  });

  it('keeps a long message to a bounded length', () => {
    expect(runFailure(new Error('x'.repeat(100_000))).message).toHaveLength(MAX_FAILURE_MESSAGE_LENGTH);
  });
});

describe('stepReasoning', () => {
  /** A reasoning model's round, as its provider package hands it to the SDK: reasoning parts, then calls with its metadata. */
  async function roundOf(provider: string, content: ModelResponse['content']) {
    const model = new MockLanguageModelV3({ provider, modelId: 'reasoner-1', doGenerate: [{ ...calls(), content }, answer('done')] });
    const result = await generateText({ model, tools, prompt: 'go', stopWhen: stepCountIs(3) });
    return { step: result.steps[0], prompts: model.doGenerateCalls.map((call) => call.prompt) };
  }
  const call = (toolCallId: string, providerMetadata?: Record<string, Record<string, string>>) => ({
    type: 'tool-call' as const,
    toolCallId,
    toolName: 'get_time',
    input: '{"zone":"UTC"}',
    ...(providerMetadata === undefined ? {} : { providerMetadata }),
  });

  it('records Anthropic thinking and redacted thinking blocks, signatures intact', async () => {
    const { step } = await roundOf('anthropic.messages', [
      { type: 'reasoning', text: 'Check the time.', providerMetadata: { anthropic: { signature: 'EqQBCkgI' } } },
      { type: 'reasoning', text: '', providerMetadata: { anthropic: { redactedData: 'EmwKAhgB' } } },
      call('call_1'),
    ]);
    expect(stepReasoning(step)).toEqual({
      provider: 'anthropic',
      model: 'reasoner-1',
      items: [
        { type: 'thinking', thinking: 'Check the time.', signature: 'EqQBCkgI' },
        { type: 'redacted_thinking', data: 'EmwKAhgB' },
      ],
    });
  });

  it("records Gemini's thought parts and the signature on the step's first function call", async () => {
    const { step } = await roundOf('google.generative-ai', [
      { type: 'reasoning', text: 'Parallel lookups.' },
      call('call_1', { google: { thoughtSignature: 'CiQB0e2K' } }),
      call('call_2'),
    ]);
    expect(stepReasoning(step)).toEqual({
      provider: 'google',
      model: 'reasoner-1',
      items: [{ text: 'Parallel lookups.', thought: true }],
      callSignatures: { call_1: 'CiQB0e2K' },
    });
  });

  it("records Gemini through Google Vertex (its metadata under `vertex`) as Gemini's, and hands it back under `vertex` as the SDK's loop sends it", async () => {
    const { step, prompts } = await roundOf('google.vertex.chat', [
      { type: 'reasoning', text: 'Parallel lookups.', providerMetadata: { vertex: { thoughtSignature: 'CiQBthought' } } },
      call('call_1', { vertex: { thoughtSignature: 'CiQB0e2K' } }),
      call('call_2'),
    ]);
    const reasoning = stepReasoning(step)!;
    expect(reasoning).toEqual({
      provider: 'google',
      model: 'reasoner-1',
      items: [{ text: 'Parallel lookups.', thought: true, thoughtSignature: 'CiQBthought' }],
      callSignatures: { call_1: 'CiQB0e2K' },
    });
    const replayed = toAiSdkMessages(
      [
        Round.fromPartial({
          roundIndex: 0,
          provider: reasoning.provider,
          model: reasoning.model,
          reasoningJson: JSON.stringify(reasoning.items),
          callSignatures: reasoning.callSignatures,
          calls: [
            { toolCallId: 'call_1', toolName: 'get_time', argumentsJson: '{"zone":"UTC"}', result: '12:00' },
            { toolCallId: 'call_2', toolName: 'get_time', argumentsJson: '{"zone":"UTC"}', result: '12:00' },
          ],
        }),
      ],
      'google.vertex.chat',
    );
    const model = new MockLanguageModelV3({ provider: 'google.vertex.chat', doGenerate: [answer('done')] });
    await generateText({ model, tools, messages: [{ role: 'user', content: 'go' }, ...replayed] });
    // The loop's own second request and the replayed history's first send the same assistant message.
    expect(model.doGenerateCalls[0].prompt[1]).toEqual(prompts[1][1]);
  });

  it("records OpenAI's reasoning item (its summaries and encrypted content) and the calls' fc_ ids", async () => {
    const rs = { itemId: 'rs_1', reasoningEncryptedContent: 'gAAAAABo' };
    const { step } = await roundOf('openai.responses', [
      { type: 'reasoning', text: 'Look it up.', providerMetadata: { openai: rs } },
      { type: 'reasoning', text: 'Then answer.', providerMetadata: { openai: rs } },
      call('call_1', { openai: { itemId: 'fc_1' } }),
    ]);
    expect(stepReasoning(step)).toEqual({
      provider: 'openai',
      model: 'reasoner-1',
      items: [
        {
          type: 'reasoning',
          id: 'rs_1',
          summary: [
            { type: 'summary_text', text: 'Look it up.' },
            { type: 'summary_text', text: 'Then answer.' },
          ],
          encrypted_content: 'gAAAAABo',
        },
      ],
      callItemIds: { call_1: 'fc_1' },
    });
  });

  it('records nothing for a step without reasoning state, or of a provider it does not know', async () => {
    expect(stepReasoning((await roundOf('anthropic.messages', [call('call_1')])).step)).toBeUndefined();
    expect(stepReasoning((await roundOf('mock-provider', [{ type: 'reasoning', text: 'hm' }, call('call_1')])).step)).toBeUndefined();
  });

  it('hands the recorded reasoning back through toAiSdkMessages as the SDK itself sends it in the next request of the loop', async () => {
    const { step, prompts } = await roundOf('anthropic.messages', [
      { type: 'text', text: 'Checking.' },
      { type: 'reasoning', text: 'Check the time.', providerMetadata: { anthropic: { signature: 'EqQBCkgI' } } },
      call('call_1'),
    ]);
    const reasoning = stepReasoning(step)!;
    const replayed = toAiSdkMessages([
      Round.fromPartial({
        roundIndex: 0,
        provider: reasoning.provider,
        model: reasoning.model,
        text: 'Checking.',
        reasoningJson: JSON.stringify(reasoning.items),
        calls: [{ toolCallId: 'call_1', toolName: 'get_time', argumentsJson: '{"zone":"UTC"}', result: '12:00' }],
      }),
    ]);
    const model = new MockLanguageModelV3({ provider: 'anthropic.messages', doGenerate: [answer('done')] });
    await generateText({ model, tools, messages: [{ role: 'user', content: 'go' }, ...replayed] });
    const reasoningParts = (prompt: (typeof prompts)[number]) =>
      prompt.flatMap((m) => (m.role === 'assistant' ? m.content.filter((p) => p.type === 'reasoning') : []));
    // The loop's own second request and the replayed history's first carry the same reasoning parts.
    expect(reasoningParts(model.doGenerateCalls[0].prompt)).toEqual(reasoningParts(prompts[1]));
    expect(reasoningParts(prompts[1])).toHaveLength(1);
  });
});
