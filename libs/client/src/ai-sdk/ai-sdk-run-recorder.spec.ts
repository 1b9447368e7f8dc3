import { type ModelMessage, stepCountIs, tool, ToolLoopAgent } from 'ai';
import { convertArrayToReadableStream, MockLanguageModelV3 } from 'ai/test';
import { z } from 'zod';
import { DEFAULT_MAX_EVENT_BYTES } from '../../../contract/src/tool-event.types';
import { TRUNCATION_TAIL } from '../../../contract/src/truncation-marker';
import type { PendingApproval } from '../generated/toolhistory/v1/toolhistory';
import { type PayloadLimits, prepareEvents, type PublishedEvent, RunPublisher, type RunScope } from '../tool-event-publisher';
import { pendingApprovalMessages, toolApprovalResponse } from './ai-sdk-approvals';
import { type GenerateTextOptions, recordedGenerateText, recordedStreamText, type StreamTextOptions } from './ai-sdk-call-wrappers';
import { toolHistoryCallbacks } from './ai-sdk-run-recorder';
import { aiSdkMajor, responseMessagesOf } from './sdk-versions.fixture';

// The SDK's own loop and scripted test model; the events as the publisher prepares them for the broker (the broker is the e2e test's business).
type ModelResponse = Awaited<ReturnType<MockLanguageModelV3['doGenerate']>>;
type StreamPart = Awaited<ReturnType<MockLanguageModelV3['doStream']>>['stream'] extends ReadableStream<infer P> ? P : never;

const scope: RunScope = { tenantId: 't1', conversationId: 'c1', channel: 'web', runId: 'run-1' };
const ENVELOPE = ['eventId', 'schemaVersion', 'tenantId', 'conversationId', 'channel', 'runId', 'occurredAt'];

/** A real RunPublisher whose events are prepared (validated, cut to the limits) as the publisher sends them, and kept: each without its envelope. */
function wireRun(runScope: RunScope = scope, limits: PayloadLimits = { maxEventBytes: DEFAULT_MAX_EVENT_BYTES }) {
  const events: Array<Record<string, unknown>> = [];
  const run = new RunPublisher(runScope, async (batch): Promise<PublishedEvent[]> => {
    await new Promise((r) => setImmediate(r));
    return prepareEvents(runScope, batch, limits).map(({ eventId, type, value }) => {
      const event = JSON.parse(value) as Record<string, unknown>;
      for (const field of ENVELOPE) delete event[field];
      events.push(event);
      return {
        eventId,
        type,
        partition: 0,
        offset: String(events.length - 1),
        consistencyToken: `ct1:k:agent.tool-events:0:${events.length - 1}`,
      };
    });
  });
  return { run, events };
}

const usage = (input = 10, output = 2) => ({
  inputTokens: { total: input, noCache: input, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: output, text: output, reasoning: undefined },
});
const calls = (...list: Array<[id: string, name: string, input: object]>): ModelResponse => ({
  content: list.map(([toolCallId, toolName, input]) => ({
    type: 'tool-call' as const,
    toolCallId,
    toolName,
    input: JSON.stringify(input),
  })),
  finishReason: { unified: 'tool-calls', raw: 'tool_calls' },
  usage: usage(),
  warnings: [],
});
const answer = (text: string): ModelResponse => ({
  content: [{ type: 'text', text }],
  finishReason: { unified: 'stop', raw: 'stop' },
  usage: usage(20, 3),
  warnings: [],
});

const tools = {
  get_order: tool({ inputSchema: z.object({ orderId: z.string() }), execute: async ({ orderId }) => `order ${orderId}: shipped` }),
  refund: tool({
    inputSchema: z.object({ orderId: z.string(), amount: z.number() }),
    needsApproval: true,
    execute: async ({ orderId, amount }) => `refunded ${amount} EUR for ${orderId}`,
  }),
  cancel: tool({ inputSchema: z.object({ orderId: z.string() }), needsApproval: true, execute: async () => 'cancelled' }),
};

const user: ModelMessage = { role: 'user', content: 'Refund A-1, cancel B-2' };
/** Messages as a host stores them (JSON); see ai-sdk-approvals.spec.ts on why a stored copy, not the SDK's objects. */
const asStored = (messages: ModelMessage[]): ModelMessage[] => JSON.parse(JSON.stringify(messages)) as ModelMessage[];

function approvalIdOf(messages: readonly ModelMessage[], toolCallId: string): string {
  for (const message of messages) {
    if (message.role !== 'assistant' || typeof message.content === 'string') continue;
    for (const part of message.content) if (part.type === 'tool-approval-request' && part.toolCallId === toolCallId) return part.approvalId;
  }
  throw new Error(`no approval request for ${toolCallId}`);
}

/** The host's tool message that answers run 1's two requests (the SDK wants every call of the round answered). */
const answers = (history: readonly ModelMessage[], c1: boolean, c2: boolean): ModelMessage => ({
  role: 'tool',
  content: [
    { type: 'tool-approval-response', approvalId: approvalIdOf(history, 'c1'), approved: c1 },
    { type: 'tool-approval-response', approvalId: approvalIdOf(history, 'c2'), approved: c2 },
  ],
});

/** Run 1: looks the order up, then asks to refund and cancel (both need approval): the loop stops there. */
async function firstRun() {
  const { run, events } = wireRun();
  const model = new MockLanguageModelV3({
    doGenerate: [
      calls(['c0', 'get_order', { orderId: 'A-1' }]),
      calls(['c1', 'refund', { orderId: 'A-1', amount: 5 }], ['c2', 'cancel', { orderId: 'B-2' }]),
    ],
  });
  const result = await recordedGenerateText(
    run,
    { model, tools, messages: [user], stopWhen: stepCountIs(10) },
    { approvalReason: ({ toolName, input }) => (toolName === 'refund' ? `refund ${(input as { amount: number }).amount} EUR` : undefined) },
  );
  return { events, history: asStored([user, ...responseMessagesOf(result)]) };
}

describe('recordedGenerateText and approvals', () => {
  it('records a call that needs approval: the call, ToolApprovalRequested with the reason the host gives, no result; the run ends as after tools', async () => {
    const { events } = await firstRun();

    expect(events).toEqual([
      {
        type: 'ToolCallRequested',
        roundIndex: 0,
        sequenceIndex: 0,
        toolCallId: 'c0',
        toolName: 'get_order',
        arguments: { orderId: 'A-1' },
      },
      { type: 'ToolResultReceived', roundIndex: 0, sequenceIndex: 0, toolCallId: 'c0', result: 'order A-1: shipped', isError: false },
      {
        type: 'ToolCallRequested',
        roundIndex: 1,
        sequenceIndex: 0,
        toolCallId: 'c1',
        toolName: 'refund',
        arguments: { orderId: 'A-1', amount: 5 },
      },
      { type: 'ToolCallRequested', roundIndex: 1, sequenceIndex: 1, toolCallId: 'c2', toolName: 'cancel', arguments: { orderId: 'B-2' } },
      { type: 'ToolApprovalRequested', roundIndex: 1, sequenceIndex: 0, toolCallId: 'c1', reason: 'refund 5 EUR' },
      { type: 'ToolApprovalRequested', roundIndex: 1, sequenceIndex: 1, toolCallId: 'c2' },
      expect.objectContaining({ type: 'RunCompleted', finishReason: 'tool_limit' }),
    ]);
  });

  it("records a later run's answers (decisions, then the approved call's result) with the calls' ids, before its first model call", async () => {
    const { history } = await firstRun();
    const { run, events } = wireRun({ ...scope, runId: 'run-2' });
    const recordedAtModelCall: string[][] = [];
    const model = new MockLanguageModelV3({
      doGenerate: async () => {
        recordedAtModelCall.push(events.map((e) => String(e.type)));
        return answer('Refunded; B-2 stays.');
      },
    });
    const messages: ModelMessage[] = [
      ...history,
      {
        role: 'tool',
        content: [
          { type: 'tool-approval-response', approvalId: approvalIdOf(history, 'c1'), approved: true, reason: 'goodwill' },
          { type: 'tool-approval-response', approvalId: approvalIdOf(history, 'c2'), approved: false, reason: 'it has shipped' },
        ],
      },
    ];

    const result = await recordedGenerateText(run, { model, tools, messages, stopWhen: stepCountIs(10) }, { decidedBy: 'agent-7' });

    expect(result.text).toBe('Refunded; B-2 stays.');
    expect(recordedAtModelCall).toEqual([['ToolApprovalDecided', 'ToolApprovalDecided', 'ToolResultReceived']]);
    expect(events).toEqual([
      {
        type: 'ToolApprovalDecided',
        roundIndex: 1,
        sequenceIndex: 0,
        toolCallId: 'c1',
        approved: true,
        reason: 'goodwill',
        decidedBy: 'agent-7',
      },
      {
        type: 'ToolApprovalDecided',
        roundIndex: 1,
        sequenceIndex: 1,
        toolCallId: 'c2',
        approved: false,
        reason: 'it has shipped',
        decidedBy: 'agent-7',
      },
      // The denied call has no result: its decision says so. The approved one's result is what the model was sent.
      { type: 'ToolResultReceived', roundIndex: 1, sequenceIndex: 0, toolCallId: 'c1', result: 'refunded 5 EUR for A-1', isError: false },
      expect.objectContaining({ type: 'RunCompleted', finishReason: 'stop' }),
    ]);
  });

  it("answers a replayed pending approval: the call's round and sequence come from the approval id; the result names its tool for the per-tool limit", async () => {
    const pending: PendingApproval = {
      toolCallId: 'call_9',
      toolName: 'refund',
      argumentsJson: '{"orderId":"Z-9","amount":3}',
      runId: 'run-0',
      reason: 'refund 3 EUR',
      roundIndex: 2,
      sequenceIndex: 1,
    };
    const { run, events } = wireRun(scope, { maxEventBytes: DEFAULT_MAX_EVENT_BYTES, maxResultChars: { tools: { refund: 8 } } });
    const messages: ModelMessage[] = [
      user,
      ...pendingApprovalMessages([pending]),
      { role: 'tool', content: [toolApprovalResponse(pending, { approved: true })] },
    ];

    await recordedGenerateText(run, { model: new MockLanguageModelV3({ doGenerate: [answer('ok')] }), tools, messages });

    expect(events.slice(0, 2)).toEqual([
      { type: 'ToolApprovalDecided', roundIndex: 2, sequenceIndex: 1, toolCallId: 'call_9', approved: true },
      {
        type: 'ToolResultReceived',
        roundIndex: 2,
        sequenceIndex: 1,
        toolCallId: 'call_9',
        result: expect.stringMatching(/^refunded…\[truncated \d+ chars\]$/),
        isError: false,
        originalBytes: JSON.stringify('refunded 3 EUR for Z-9').length,
      },
    ]);
  });

  it("takes the answered call's position from the host's pendingApprovals before its place in the messages", async () => {
    const { history } = await firstRun();
    const { run, events } = wireRun();
    const messages: ModelMessage[] = [...history, answers(history, true, false)];
    const pendingApprovals = [{ toolCallId: 'c2', roundIndex: 6, sequenceIndex: 0 }];

    await recordedGenerateText(
      run,
      { model: new MockLanguageModelV3({ doGenerate: [answer('ok')] }), tools, messages },
      { pendingApprovals },
    );

    expect(events.slice(0, 2)).toEqual([
      { type: 'ToolApprovalDecided', roundIndex: 1, sequenceIndex: 0, toolCallId: 'c1', approved: true },
      { type: 'ToolApprovalDecided', roundIndex: 6, sequenceIndex: 0, toolCallId: 'c2', approved: false },
    ]);
  });

  it('records the answers of a streamed call the same way', async () => {
    const { history } = await firstRun();
    const { run, events } = wireRun();
    const model = new MockLanguageModelV3({
      doStream: [
        {
          stream: convertArrayToReadableStream<StreamPart>([
            { type: 'stream-start', warnings: [] },
            { type: 'text-start', id: 't' },
            { type: 'text-delta', id: 't', delta: 'Refunded.' },
            { type: 'text-end', id: 't' },
            { type: 'finish', finishReason: { unified: 'stop', raw: 'stop' }, usage: usage() },
          ]),
        },
      ],
    });
    const messages: ModelMessage[] = [...history, answers(history, true, false)];

    const result = recordedStreamText(run, { model, tools, messages });
    await result.consumeStream();
    await result.recorded;

    expect(events.map((e) => [e.type, e.toolCallId])).toEqual([
      ['ToolApprovalDecided', 'c1'],
      ['ToolApprovalDecided', 'c2'],
      ['ToolResultReceived', 'c1'],
      ['RunCompleted', undefined],
    ]);
  });

  it("records an Agent's resumed call from its input messages, when no prepareStep can be passed", async () => {
    const { history } = await firstRun();
    const { run, events } = wireRun();
    const messages: ModelMessage[] = [...history, answers(history, true, false)];
    const agent = new ToolLoopAgent({ model: new MockLanguageModelV3({ doGenerate: [answer('Refunded.')] }), tools });

    const recorder = toolHistoryCallbacks<typeof tools>(run, { messages });
    await recorder.complete(await agent.generate({ messages, onStepFinish: recorder.onStepFinish }));
    await recorder.recorded;

    expect(events.map((e) => [e.type, e.toolCallId, e.roundIndex, e.sequenceIndex])).toEqual([
      ['ToolApprovalDecided', 'c1', 1, 0],
      ['ToolApprovalDecided', 'c2', 1, 1],
      ['ToolResultReceived', 'c1', 1, 0],
      ['RunCompleted', undefined, undefined, undefined],
    ]);
  });
});

describe('recordedGenerateText and big results', () => {
  it('completes the turn with a 3 MB result: the recorded result is cut to fit, with the truncation marker and its original size', async () => {
    const { run, events } = wireRun();
    const dump = tool({ inputSchema: z.object({}), execute: async () => 'x'.repeat(3 * 1024 * 1024) });
    const model = new MockLanguageModelV3({ doGenerate: [calls(['big', 'dump', {}]), answer('That was a lot.')] });

    const result = await recordedGenerateText(run, { model, tools: { dump }, prompt: 'dump it', stopWhen: stepCountIs(3) });

    expect(result.text).toBe('That was a lot.');
    const recorded = events.find((e) => e.type === 'ToolResultReceived')!;
    expect(recorded.result).toMatch(TRUNCATION_TAIL);
    expect(recorded.originalBytes).toBe(3 * 1024 * 1024 + 2);
    expect(events.at(-1)).toMatchObject({ type: 'RunCompleted', finishReason: 'stop' });
  });
});

describe('recordedGenerateText and the cited sources of the answer', () => {
  const search = {
    web_search: tool({
      inputSchema: z.object({ q: z.string() }),
      execute: async () => ({ results: [1, 2, 3, 4, 5].map((n) => ({ sourceNumber: n, title: `page ${n}` })) }),
    }),
  };
  const searchThenAnswer = (text: string) =>
    new MockLanguageModelV3({ doGenerate: [calls(['s0', 'web_search', { q: 'rain' }]), answer(text)] });

  it.each<[string, boolean | undefined, string, number[] | undefined]>([
    ['on: the numbers the answer cites', true, 'Rain is likely [source4], as the radar shows [source2].', [2, 4]],
    ['on: an answer that cites nothing is []', true, 'Rain is likely.', []],
    ['off: left out', false, 'Rain is likely [source4].', undefined],
    ['by default: left out', undefined, 'Rain is likely [source4].', undefined],
  ])('%s', async (_d, citedSourcesFromAnswer, text, expected) => {
    const { run, events } = wireRun();

    await recordedGenerateText(
      run,
      { model: searchThenAnswer(text), tools: search, prompt: 'rain?', stopWhen: stepCountIs(3) },
      citedSourcesFromAnswer === undefined ? {} : { citedSourcesFromAnswer },
    );

    const completed = events.at(-1)!;
    expect(completed).toMatchObject({ type: 'RunCompleted', finishReason: 'stop' });
    if (expected === undefined) expect(completed).not.toHaveProperty('citedSources');
    else expect(completed.citedSources).toEqual(expected);
  });

  it('reads a streamed answer the same way', async () => {
    const { run, events } = wireRun();
    const model = new MockLanguageModelV3({
      doStream: [
        {
          stream: convertArrayToReadableStream<StreamPart>([
            { type: 'stream-start', warnings: [] },
            { type: 'text-start', id: 't' },
            { type: 'text-delta', id: 't', delta: 'Rain [source3]' },
            { type: 'text-delta', id: 't', delta: '[source1].' },
            { type: 'text-end', id: 't' },
            { type: 'finish', finishReason: { unified: 'stop', raw: 'stop' }, usage: usage() },
          ]),
        },
      ],
    });

    const result = recordedStreamText(run, { model, prompt: 'rain?' }, { citedSourcesFromAnswer: true });
    await result.consumeStream();
    await result.recorded;

    expect(events.at(-1)).toMatchObject({ type: 'RunCompleted', citedSources: [1, 3] });
  });

  it('leaves them out of a run that ends without an answer (a later run may cite its results), and of a failed run', async () => {
    const afterTools = wireRun();
    await recordedGenerateText(
      afterTools.run,
      { model: searchThenAnswer('[source1]'), tools: search, prompt: 'rain?', stopWhen: stepCountIs(1) },
      { citedSourcesFromAnswer: true },
    );
    expect(afterTools.events.at(-1)).toMatchObject({ type: 'RunCompleted', finishReason: 'tool_limit' });
    expect(afterTools.events.at(-1)).not.toHaveProperty('citedSources');

    const failed = wireRun();
    const model = new MockLanguageModelV3({
      doGenerate: async () => {
        throw new Error('overloaded');
      },
    });
    await expect(
      recordedGenerateText(failed.run, { model, prompt: 'rain?', maxRetries: 0 }, { citedSourcesFromAnswer: true }),
    ).rejects.toThrow('overloaded');
    expect(failed.events).toEqual([{ type: 'RunFailed', error: { code: 'Error', message: 'overloaded' } }]);
  });
});

describe('recordedGenerateText and the user message id', () => {
  it("gives the run the last user UI message's id, or the one it is told", async () => {
    for (const [recording, expected] of [
      [
        {
          uiMessages: [
            { id: 'u1', role: 'user' },
            { id: 'a1', role: 'assistant' },
            { id: 'u2', role: 'user' },
            { id: 'a2', role: 'assistant' },
          ],
        },
        'u2',
      ],
      [{ userMessageId: 'host-9', uiMessages: [{ id: 'u1', role: 'user' }] }, 'host-9'],
      [{}, undefined],
    ] as const) {
      const { run } = wireRun();
      const publisher = { run: jest.fn((_: RunScope) => run) };

      await recordedGenerateText(
        { publisher, scope },
        { model: new MockLanguageModelV3({ doGenerate: [answer('hi')] }), prompt: 'hi' },
        recording,
      );

      expect(publisher.run).toHaveBeenCalledWith(expected === undefined ? scope : { ...scope, userMessageId: expected });
    }
  });

  it("refuses a userMessageId that a RunPublisher's fixed scope does not have, before any model call", async () => {
    const model = new MockLanguageModelV3({ doGenerate: [answer('hi')] });

    await expect(recordedGenerateText(wireRun().run, { model, prompt: 'hi' }, { userMessageId: 'm1' })).rejects.toThrow(
      "a RunPublisher's scope is fixed",
    );
    expect(model.doGenerateCalls).toHaveLength(0);
  });
});

describe('recordedGenerateText and a failed run', () => {
  it('records the tokens of the model calls made before the failure', async () => {
    const { run, events } = wireRun();
    let call = 0;
    const model = new MockLanguageModelV3({
      doGenerate: async () => {
        if (call++ === 0) return calls(['c0', 'get_order', { orderId: 'A-1' }]);
        throw new Error('overloaded');
      },
    });

    await expect(recordedGenerateText(run, { model, tools, prompt: 'go', stopWhen: stepCountIs(5), maxRetries: 0 })).rejects.toThrow(
      'overloaded',
    );

    expect(events.at(-1)).toEqual({
      type: 'RunFailed',
      error: { code: 'Error', message: 'overloaded' },
      usage: [{ inputTokens: 10, outputTokens: 2, model: 'mock-model-id' }],
    });
  });
});

describe('recordedGenerateText and recordedStreamText across AI SDK majors', () => {
  it("records with the caller's callbacks under AI SDK 7's names (onStepEnd, onEnd, onToolExecutionEnd), and runs them after", async () => {
    const { run, events } = wireRun();
    const seen: string[] = [];
    const model = new MockLanguageModelV3({ doGenerate: [calls(['c0', 'get_order', { orderId: 'A-1' }]), answer('Shipped.')] });
    // AI SDK 7 calls these instead of onStepFinish, onFinish and experimental_onToolCallFinish when given (6 does not know them).
    const renamed = {
      onStepEnd: () => void seen.push(`step end: ${events.length} events`),
      onEnd: () => void seen.push(`end: ${events.length} events`),
      onToolExecutionEnd: () => void seen.push('tool end'),
    };

    await recordedGenerateText(run, { model, tools, prompt: 'where is A-1?', stopWhen: stepCountIs(3), ...renamed } as GenerateTextOptions<
      typeof tools
    >);

    expect(events.map((e) => e.type)).toEqual(['ToolCallRequested', 'ToolResultReceived', 'RunCompleted']);
    expect(seen).toEqual(['tool end', 'step end: 2 events', 'step end: 2 events', 'end: 3 events']);
  });

  (aiSdkMajor() >= 7 ? it : it.skip)(
    'AI SDK 7, streamRetries: a stream error the SDK retries ends no run; what onError answers goes back to the SDK',
    async () => {
      const { run, events } = wireRun();
      const streams: StreamPart[][] = [
        [{ type: 'error', error: new Error('overloaded') }],
        [{ type: 'error', error: new Error('overloaded again') }],
        [
          { type: 'text-start', id: 't' },
          { type: 'text-delta', id: 't', delta: 'Recovered.' },
          { type: 'text-end', id: 't' },
          { type: 'finish', finishReason: { unified: 'stop', raw: 'stop' }, usage: usage(20, 3) },
        ],
      ];
      const model = new MockLanguageModelV3({ doStream: async () => ({ stream: convertArrayToReadableStream(streams.shift() ?? []) }) });
      const errors: string[] = [];

      // One automatic retry, then one the caller's onError asks for.
      const result = recordedStreamText(run, {
        model,
        prompt: 'go',
        streamRetries: 1,
        onError: ({ error }: { error: unknown }) => {
          errors.push((error as Error).message);
          return { retry: true };
        },
        // AI SDK 6's types know neither streamRetries nor an answer from onError.
      } as unknown as StreamTextOptions);
      await result.consumeStream();
      await result.recorded;

      expect(await result.text).toBe('Recovered.');
      expect(errors).toEqual(['overloaded', 'overloaded again']);
      expect(events.map((e) => e.type)).toEqual(['RunCompleted']);
    },
  );

  (aiSdkMajor() >= 7 ? it : it.skip)('AI SDK 7, streamRetries: a stream that still ends in the error fails the run with it', async () => {
    const { run, events } = wireRun();
    const model = new MockLanguageModelV3({
      doStream: async () => ({ stream: convertArrayToReadableStream<StreamPart>([{ type: 'error', error: new Error('overloaded') }]) }),
    });

    const result = recordedStreamText(run, { model, prompt: 'go', streamRetries: 1, onError: () => undefined } as StreamTextOptions);
    await result.consumeStream();
    await result.recorded;

    expect(events).toEqual([expect.objectContaining({ type: 'RunFailed', error: { code: 'Error', message: 'overloaded' } })]);
  });
});
