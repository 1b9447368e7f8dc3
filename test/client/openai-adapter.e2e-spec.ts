import OpenAI from 'openai';
import type {
  ChatCompletion,
  ChatCompletionCreateParamsNonStreaming,
  ChatCompletionMessageParam,
  ChatCompletionTool,
} from 'openai/resources/chat/completions';
import type { ResponseInputItem } from 'openai/resources/responses/responses';
import {
  InvocationStatus,
  OmissionReason,
  ToolEventPublisher,
  ToolHistoryClient,
  type HistoryMessages,
  type JsonObject,
  type JsonValue,
  type ReplayHistory,
  type ToolEvent,
  type ToolEventType,
} from '../../libs/client/src';
import { type OpenAiResponse, type OpenAiToolLoopRecorder, recordOpenAiToolLoop } from '../../libs/client/src/openai';
import { HOUR_LONG_FRESHNESS, startClientStack, stopClientStack } from '../support/client-stack';
import type { RunningStack } from '../support/running-stack';
import { uniqueName } from '../support/test-environment';
import { waitFor } from '../support/wait-for';

type ScriptedReply = { status?: number; body: object };

/**
 * The model: the real SDK client, with a fetch that answers each chat
 * completion request with the next scripted reply and keeps the request
 * body it was sent.
 */
function scriptedOpenAi(replies: ScriptedReply[]) {
  const requests: ChatCompletionCreateParamsNonStreaming[] = [];
  const fetch = async (url: string | URL | Request, init?: RequestInit): Promise<Response> => {
    if (!String(url).endsWith('/v1/chat/completions')) throw new Error(`unexpected request to ${String(url)}`);
    requests.push(JSON.parse(String(init?.body)) as ChatCompletionCreateParamsNonStreaming);
    const reply = replies.shift();
    if (reply === undefined) throw new Error('the script has no reply left');
    return new Response(JSON.stringify(reply.body), { status: reply.status ?? 200, headers: { 'content-type': 'application/json' } });
  };
  const openai = new OpenAI({ apiKey: 'test', baseURL: 'http://127.0.0.1:1/v1', fetch, maxRetries: 0 });
  return { openai, requests };
}

let completionNumber = 0;
/** A chat completion as the API returns it: tool calls (name, arguments text) or a final answer. */
function reply(
  answer: { toolCalls: Array<[id: string, name: string, args: string]> } | { content: string },
  usage: [prompt: number, completion: number],
): ScriptedReply {
  const toolCalls = 'toolCalls' in answer ? answer.toolCalls : undefined;
  const body: ChatCompletion = {
    id: `chatcmpl-${++completionNumber}`,
    object: 'chat.completion',
    created: Math.floor(Date.now() / 1000),
    model: 'gpt-test-1',
    choices: [
      {
        index: 0,
        logprobs: null,
        finish_reason: toolCalls ? 'tool_calls' : 'stop',
        message: {
          role: 'assistant',
          content: 'content' in answer ? answer.content : null,
          refusal: null,
          ...(toolCalls
            ? { tool_calls: toolCalls.map(([id, name, args]) => ({ id, type: 'function' as const, function: { name, arguments: args } })) }
            : {}),
        },
      },
    ],
    usage: { prompt_tokens: usage[0], completion_tokens: usage[1], total_tokens: usage[0] + usage[1] },
  };
  return { body };
}

const TOOLS: ChatCompletionTool[] = ['get_weather', 'suggest_packing', 'search_flights'].map((name) => ({
  type: 'function',
  function: { name, parameters: { type: 'object', properties: {} } },
}));

/** A Responses API output message of the model's text. */
const outputMessage = (text: string) => ({
  type: 'message',
  id: `msg_${text.length}`,
  role: 'assistant',
  status: 'completed',
  content: [{ type: 'output_text', text, annotations: [] }],
});

/** A Responses API function_call output item, with its own item id. */
const functionCallItem = (id: string, callId: string, name: string, args: string) => ({
  type: 'function_call',
  id,
  call_id: callId,
  name,
  arguments: args,
  status: 'completed',
});

/** The agent's tools: weather as JSON, the rest as text; a failing tool throws. */
const toolImplementations: Record<string, (args: JsonObject) => JsonValue> = {
  get_weather: (args) => ({ city: String(args.city), tempC: args.city === 'Paris' ? 18 : 12, sky: 'rain' }),
  suggest_packing: (args) => `umbrella and a scarf for ${JSON.stringify(args.tempsC)}`,
  search_flights: (args) => {
    if ('_raw' in args) throw new Error(`arguments are not JSON: ${String(args._raw)}`);
    return `no flights to ${String(args.to)}`;
  },
};

/**
 * The host's tool loop: call the model, run the tools it asks for in
 * parallel, send their tool messages, and call it again until it answers or
 * `maxRounds` rounds have run. Any error records RunFailed.
 */
async function runToolLoop(
  openai: OpenAI,
  recorder: OpenAiToolLoopRecorder,
  messages: ChatCompletionMessageParam[],
  { maxRounds, assistantMessageId }: { maxRounds: number; assistantMessageId: string },
): Promise<ChatCompletion> {
  try {
    for (let rounds = 1; ; rounds++) {
      const completion = await openai.chat.completions.create({ model: 'gpt-test-1', messages, tools: TOOLS });
      const round = await recorder.assistantMessage(completion);
      if (round === undefined) {
        await recorder.finish(completion, { assistantMessageId });
        return completion;
      }
      messages.push(completion.choices[0].message);
      const toolMessages = await Promise.all(
        round.calls.map(async (call) => {
          try {
            return await recorder.toolMessage(call.toolCallId, toolImplementations[call.toolName](call.arguments));
          } catch (error) {
            return recorder.toolMessage(call.toolCallId, `error: ${(error as Error).message}`, { isError: true });
          }
        }),
      );
      messages.push(...toolMessages);
      if (rounds === maxRounds) {
        // The limit: the loop ends right after executing tools, without another model call.
        await recorder.finish(completion, { assistantMessageId });
        return completion;
      }
    }
  } catch (error) {
    await recorder.fail(error);
    throw error;
  }
}

describe('@toolhistory/client/openai: a real OpenAI SDK tool loop through the real broker and the real service', () => {
  let stack: RunningStack;
  let publisher: ToolEventPublisher;
  let client: ToolHistoryClient;
  const tenantId = uniqueName('tenant');

  beforeAll(async () => {
    ({ stack, publisher, client } = await startClientStack('openai', HOUR_LONG_FRESHNESS));
  });

  afterAll(async () => {
    await stopClientStack({ stack, publisher, client });
  });

  const recorderFor = (conversationId: string, runId: string) =>
    recordOpenAiToolLoop(publisher.run({ tenantId, conversationId, channel: 'web', runId }));

  /** The run's recorded event of `type`, as the service's subscription delivers it. */
  async function recordedEvent(type: ToolEventType, runId: string): Promise<ToolEvent> {
    for await (const recorded of client.subscribe({ tenantId, types: [type], signal: AbortSignal.timeout(30_000) })) {
      if (recorded.runId === runId) return recorded.event;
    }
    throw new Error(`no ${type} recorded for ${runId} within 30 s`);
  }

  const replayUntil = (conversationId: string, done: (history: ReplayHistory<HistoryMessages['openai']>) => boolean, what: string) =>
    waitFor(() => client.getReplayHistory({ tenantId, conversationId, format: 'openai' }), done, { what });

  it("records a Responses API round's encrypted reasoning and fc_ ids, and the run that goes on sends them back byte for byte", async () => {
    const conversationId = uniqueName('conv');
    const reasoningItem = {
      id: 'rs_68a1f0c2d4e81',
      type: 'reasoning',
      summary: [{ type: 'summary_text', text: 'Paris first; the weather decides what to pack.' }],
      encrypted_content: 'gAAAAABoofDCq1x0Zk2',
    };
    const bodies: Array<{ input: unknown[] }> = [];
    const responsesReplies = [
      [
        reasoningItem,
        outputMessage('I will check the weather in Paris first.'),
        functionCallItem('fc_68a1f0c2d4e90', 'call_paris', 'get_weather', '{"city":"Paris"}'),
      ],
      [functionCallItem('fc_68a1f0c2d4e91', 'call_pack', 'suggest_packing', '{"tempsC":[18]}')],
      [outputMessage('Paris is 18°C and rainy: take an umbrella.')],
    ];
    const fetch = async (url: string | URL | Request, init?: RequestInit): Promise<Response> => {
      if (!String(url).endsWith('/v1/responses')) throw new Error(`unexpected request to ${String(url)}`);
      bodies.push(JSON.parse(String(init?.body)) as { input: unknown[] });
      const output = responsesReplies.shift();
      if (output === undefined) throw new Error('the script has no reply left');
      const body = {
        id: `resp_${bodies.length}`,
        object: 'response',
        created_at: 1,
        model: 'gpt-5',
        status: 'completed',
        output,
        usage: { input_tokens: 40, output_tokens: 20, total_tokens: 60 },
      };
      return new Response(JSON.stringify(body), { status: 200, headers: { 'content-type': 'application/json' } });
    };
    const openai = new OpenAI({ apiKey: 'test', baseURL: 'http://127.0.0.1:1/v1', fetch, maxRetries: 0 });
    const question = { role: 'user' as const, content: 'What should I pack for Paris?' };

    // Run 1: two rounds, then its round limit (no answer): the turn goes on.
    const recorder = recordOpenAiToolLoop(
      { publisher, scope: { tenantId, conversationId, channel: 'web', runId: 'run-1' } },
      { userMessageId: 'u1' },
    );
    const input: ResponseInputItem[] = [question];
    let last: OpenAiResponse | undefined;
    for (let rounds = 0; rounds < 2; rounds++) {
      last = await openai.responses.create({ model: 'gpt-5', input, store: false, include: ['reasoning.encrypted_content'] });
      const round = await recorder.response(last);
      input.push(...(last.output as ResponseInputItem[]));
      for (const call of round!.calls)
        input.push(await recorder.functionCallOutput(call.toolCallId, toolImplementations[call.toolName](call.arguments)));
    }
    await recorder.finish(last!);
    expect(await recordedEvent('ModelResponseReceived', 'run-1')).toMatchObject({
      roundIndex: 0,
      provider: 'openai',
      model: 'gpt-5',
      text: 'I will check the weather in Paris first.',
    });

    // Run 2 goes on from the replay, for the model it calls: the round whose outputs reached the model, with its reasoning.
    const history = await waitFor(
      () => client.getReplayHistory({ tenantId, conversationId, format: 'openai-responses', model: 'gpt-5' }),
      (h) => h.turns.some((t) => t.rounds.some((r) => r.reasoningJson !== '')),
      { what: "run 1's round replayed with its reasoning" },
    );
    await openai.responses.create({ model: 'gpt-5', input: [question, ...history.messages], store: false });

    // The request as it went over the wire: the reasoning item exactly as the API gave it, then the text, then the call with its fc_ id.
    const sent = bodies[2].input;
    expect(JSON.stringify(sent[1])).toBe(JSON.stringify(reasoningItem));
    expect(sent.slice(2)).toEqual([
      { type: 'message', role: 'assistant', content: 'I will check the weather in Paris first.' },
      { type: 'function_call', id: 'fc_68a1f0c2d4e90', call_id: 'call_paris', name: 'get_weather', arguments: '{"city":"Paris"}' },
      { type: 'function_call_output', call_id: 'call_paris', output: '{"city":"Paris","tempC":18,"sky":"rain"}' },
    ]);
  });

  it('records a two-round turn, and the next turn sends its replayed tool calls and results back to the model', async () => {
    const conversationId = uniqueName('conv');
    const { openai, requests } = scriptedOpenAi([
      reply(
        {
          toolCalls: [
            ['call_paris', 'get_weather', '{"city": "Paris"}'],
            ['call_berlin', 'get_weather', '{"city": "Berlin"}'],
          ],
        },
        [50, 20],
      ),
      reply({ toolCalls: [['call_pack', 'suggest_packing', '{"tempsC": [18, 12]}']] }, [90, 15]),
      reply({ content: 'Paris 18°C, Berlin 12°C, both rainy: take an umbrella and a scarf.' }, [130, 25]),
      // Turn 2.
      reply({ content: 'Paris was 18°C.' }, [200, 8]),
    ]);

    // Turn 1: the host keeps its own messages with ids; the tool loop's messages are the service's.
    const user1: ChatCompletionMessageParam = { role: 'user', content: 'Weather in Paris and Berlin, and what should I pack?' };
    const final1 = await runToolLoop(openai, recorderFor(conversationId, 'turn-1'), [user1], {
      maxRounds: 5,
      assistantMessageId: 'msg-a1',
    });
    const hostMessages: Array<{ id: string; message: ChatCompletionMessageParam }> = [
      { id: 'msg-u1', message: user1 },
      { id: 'msg-a1', message: { role: 'assistant', content: final1.choices[0].message.content } },
    ];
    expect(requests).toHaveLength(3);

    const history = await replayUntil(conversationId, (h) => h.turns.some((t) => t.assistantMessageId === 'msg-a1'), 'turn 1 replayed');
    expect(history.omitted).toEqual([]);
    expect(history.turns.map((t) => [t.runId, t.rounds.map((r) => r.calls.map((c) => c.toolCallId))])).toEqual([
      ['turn-1', [['call_paris', 'call_berlin'], ['call_pack']]],
    ]);
    const completed = await recordedEvent('RunCompleted', 'turn-1');
    expect(completed).toMatchObject({
      finishReason: 'stop',
      assistantMessageId: 'msg-a1',
      usage: [
        { inputTokens: 50, outputTokens: 20, model: 'gpt-test-1' },
        { inputTokens: 90, outputTokens: 15, model: 'gpt-test-1' },
        { inputTokens: 130, outputTokens: 25, model: 'gpt-test-1' },
      ],
    });

    // Turn 2: each turn's replayed tool segment goes before the host's message it ends with. No cast: the
    // replayed messages are chat-completions message params as they are.
    const byMessage = new Map(history.turns.map((t) => [t.assistantMessageId, t.messages]));
    const messages: ChatCompletionMessageParam[] = [
      ...hostMessages.flatMap(({ id, message }) => [...(byMessage.get(id) ?? []), message]),
      { role: 'user', content: 'And how warm was Paris?' },
    ];
    await runToolLoop(openai, recorderFor(conversationId, 'turn-2'), messages, { maxRounds: 5, assistantMessageId: 'msg-a2' });

    // What the model received, read from the request the SDK sent.
    const sent = requests[3].messages;
    expect(sent.map((m) => m.role)).toEqual(['user', 'assistant', 'tool', 'tool', 'assistant', 'tool', 'assistant', 'user']);
    expect(sent[0]).toEqual(user1);
    expect(sent[6]).toEqual({ role: 'assistant', content: 'Paris 18°C, Berlin 12°C, both rainy: take an umbrella and a scarf.' });
    const calls = [sent[1], sent[4]].map((m) =>
      m.role === 'assistant'
        ? (m.tool_calls ?? []).map((c) => (c.type === 'function' ? [c.id, c.function.name, c.function.arguments] : []))
        : [],
    );
    expect(calls.map((round) => round.map(([id, name]) => [id, name]))).toEqual([
      [
        ['call_paris', 'get_weather'],
        ['call_berlin', 'get_weather'],
      ],
      [['call_pack', 'suggest_packing']],
    ]);
    expect(calls.flat().map(([, , args]) => JSON.parse(args))).toEqual([{ city: 'Paris' }, { city: 'Berlin' }, { tempsC: [18, 12] }]);
    // Every call answered by a tool message with its id, in the order of the calls, with what the tool returned.
    const toolMessages = [sent[2], sent[3], sent[5]].map((m) => (m.role === 'tool' ? [m.tool_call_id, m.content] : []));
    expect(toolMessages.map(([id]) => id)).toEqual(['call_paris', 'call_berlin', 'call_pack']);
    expect(JSON.parse(toolMessages[0][1] as string)).toEqual({ city: 'Paris', tempC: 18, sky: 'rain' });
    expect(JSON.parse(toolMessages[1][1] as string)).toEqual({ city: 'Berlin', tempC: 12, sky: 'rain' });
    expect(toolMessages[2][1]).toBe('umbrella and a scarf for [18,12]');

    // Turn 2 asked for no tool: a completed run without rounds.
    expect(await recordedEvent('RunCompleted', 'turn-2')).toMatchObject({ finishReason: 'stop', assistantMessageId: 'msg-a2' });
  });

  it('ends a loop at its round limit with tool_limit: the trailing round is recorded but not replayed', async () => {
    const conversationId = uniqueName('conv');
    const { openai, requests } = scriptedOpenAi([
      reply({ toolCalls: [['call_w', 'get_weather', '{"city":"Paris"}']] }, [40, 10]),
      reply({ toolCalls: [['call_f', 'search_flights', '{"to":"Oslo"}']] }, [60, 12]),
    ]);
    await runToolLoop(openai, recorderFor(conversationId, 'limited'), [{ role: 'user', content: 'Plan a trip' }], {
      maxRounds: 2,
      assistantMessageId: 'msg-limited',
    });
    expect(requests).toHaveLength(2);

    expect(await recordedEvent('RunCompleted', 'limited')).toMatchObject({
      finishReason: 'tool_limit',
      assistantMessageId: 'msg-limited',
      // The last completion was passed to assistantMessage and to finish: counted once.
      usage: [
        { inputTokens: 40, outputTokens: 10, model: 'gpt-test-1' },
        { inputTokens: 60, outputTokens: 12, model: 'gpt-test-1' },
      ],
    });
    const history = await replayUntil(conversationId, (h) => h.turns.length === 1, 'the limited run replayed');
    expect(history.turns[0].rounds.map((r) => r.calls.map((c) => c.toolCallId))).toEqual([['call_w']]);
    expect(history.messages).toEqual([
      {
        role: 'assistant',
        content: null,
        tool_calls: [{ id: 'call_w', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }],
      },
      { role: 'tool', tool_call_id: 'call_w', content: expect.any(String) },
    ]);
    expect(history.omitted).toEqual([
      expect.objectContaining({
        runId: 'limited',
        roundIndex: 1,
        toolCallId: 'call_f',
        reason: OmissionReason.OMISSION_REASON_TRAILING_UNSENT,
      }),
    ]);
    // Still there for audit.
    const invocations = [];
    for await (const invocation of client.listToolInvocations({ tenantId, conversationId })) invocations.push(invocation);
    expect(invocations.map((i) => [i.roundIndex, i.toolCallId, i.result])).toEqual([
      [0, 'call_w', expect.any(String)],
      [1, 'call_f', 'no flights to Oslo'],
    ]);
  });

  it('records RunFailed when the model call fails, keeps the invocations for audit, and replays nothing of the run', async () => {
    const conversationId = uniqueName('conv');
    const { openai } = scriptedOpenAi([
      // Arguments the model cut off: recorded as _raw, answered with an error result.
      reply({ toolCalls: [['call_bad', 'search_flights', '{"to": "Os']] }, [40, 10]),
      {
        status: 400,
        body: {
          error: {
            message: 'This model maximum context length is exceeded',
            type: 'invalid_request_error',
            code: 'context_length_exceeded',
          },
        },
      },
    ]);
    await expect(
      runToolLoop(openai, recorderFor(conversationId, 'failing'), [{ role: 'user', content: 'Flights to Oslo?' }], {
        maxRounds: 5,
        assistantMessageId: 'msg-failing',
      }),
    ).rejects.toBeInstanceOf(OpenAI.BadRequestError);

    expect(await recordedEvent('RunFailed', 'failing')).toMatchObject({
      error: { code: 'context_length_exceeded', message: '400 This model maximum context length is exceeded' },
    });
    const invocations = await waitFor(
      async () => {
        const found = [];
        for await (const invocation of client.listToolInvocations({ tenantId, conversationId, runId: 'failing' })) found.push(invocation);
        return found;
      },
      (found) => found.length === 1 && found[0].status === InvocationStatus.INVOCATION_STATUS_ERROR,
      { what: 'the failing run invocation with its error result' },
    );
    expect(JSON.parse(invocations[0].argumentsJson)).toEqual({ _raw: '{"to": "Os' });
    expect(invocations[0].result).toBe('error: arguments are not JSON: {"to": "Os');
    const history = await client.getReplayHistory({ tenantId, conversationId, format: 'openai' });
    expect(history.messages).toEqual([]);
    expect(history.omitted).toEqual([
      expect.objectContaining({ runId: 'failing', toolCallId: 'call_bad', reason: OmissionReason.OMISSION_REASON_RUN_FAILED }),
    ]);
  });
});
