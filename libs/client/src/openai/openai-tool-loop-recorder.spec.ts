import type {
  ChatCompletion,
  ChatCompletionAssistantMessageParam,
  ChatCompletionMessage,
  ChatCompletionMessageToolCall,
} from 'openai/resources/chat/completions';
import { deriveEventId } from '../event-ids';
import { serializeValidEvent } from '../event-validation';
import { PUBLISHED_SCHEMA_VERSION, RunPublisher } from '../tool-event-publisher';
import fc from 'fast-check';
import { type OpenAiResponse, responseRoundOf } from './openai-responses-mapper';
import { type OpenAiToolLoopOptions, recordOpenAiToolLoop } from './openai-tool-loop-recorder';

/** A real RunPublisher whose events are checked against the contract and kept instead of sent. */
function capturingRun() {
  const scope = { tenantId: 't', conversationId: 'c', channel: 'web', runId: 'r' };
  const events: Array<Record<string, unknown>> = [];
  const run = new RunPublisher(scope, async (batch) =>
    batch.map(({ identity, overrides, fields }) => {
      const eventId = overrides.eventId ?? deriveEventId(scope, identity);
      const event = { eventId, type: identity.type, schemaVersion: PUBLISHED_SCHEMA_VERSION, ...scope, occurredAt: '2025-01-01T00:00:00Z' };
      serializeValidEvent({ ...event, ...fields });
      events.push({ ...event, ...fields });
      return {
        eventId,
        type: identity.type,
        partition: 0,
        offset: String(events.length - 1),
        consistencyToken: `ct1:k:agent.tool-events:0:${events.length - 1}`,
      };
    }),
  );
  return { run, events };
}

const call = (id: string, name: string, args: string): ChatCompletionMessageToolCall => ({
  id,
  type: 'function',
  function: { name, arguments: args },
});

function completion(id: string, toolCalls: ChatCompletionMessageToolCall[] | undefined, usage: [number, number]): ChatCompletion {
  const message: ChatCompletionMessage = {
    role: 'assistant',
    content: toolCalls ? null : 'answer',
    refusal: null,
    ...(toolCalls ? { tool_calls: toolCalls } : {}),
  };
  return {
    id,
    object: 'chat.completion',
    created: 1,
    model: 'gpt-test',
    choices: [{ index: 0, message, finish_reason: toolCalls ? 'tool_calls' : 'stop', logprobs: null }],
    usage: { prompt_tokens: usage[0], completion_tokens: usage[1], total_tokens: usage[0] + usage[1] },
  };
}

const pick = (events: Array<Record<string, unknown>>, ...keys: string[]) =>
  events.map((e) => Object.fromEntries(keys.filter((k) => k in e).map((k) => [k, e[k]])));

describe('OpenAiToolLoopRecorder', () => {
  it('records rounds, results and the completion of a two-round loop', async () => {
    const { run, events } = capturingRun();
    const recorder = recordOpenAiToolLoop(run);

    const first = completion('cc-1', [call('call_a', 'get_weather', '{"city":"Paris"}'), call('call_b', 'get_weather', 'Berlin')], [10, 4]);
    const round0 = await recorder.assistantMessage(first);
    expect(round0).toEqual({
      roundIndex: 0,
      calls: [
        { sequenceIndex: 0, toolCallId: 'call_a', toolName: 'get_weather', arguments: { city: 'Paris' } },
        { sequenceIndex: 1, toolCallId: 'call_b', toolName: 'get_weather', arguments: { _raw: 'Berlin' } },
      ],
    });
    // Parallel tools answer in any order.
    const [b, a] = await Promise.all([
      recorder.toolMessage('call_b', 'no such city', { isError: true }),
      recorder.toolMessage('call_a', { tempC: 18 }),
    ]);
    expect(a).toEqual({ role: 'tool', tool_call_id: 'call_a', content: '{"tempC":18}' });
    expect(b).toEqual({ role: 'tool', tool_call_id: 'call_b', content: 'no such city' });

    const second = completion('cc-2', [call('call_c', 'pack', '{}')], [20, 3]);
    expect((await recorder.assistantMessage(second.choices[0].message))?.roundIndex).toBe(1);
    await recorder.toolOutput('call_c', 'umbrella');
    await recorder.finish(completion('cc-3', undefined, [30, 12]), { assistantMessageId: 'msg-final' });

    expect(pick(events, 'type', 'roundIndex', 'sequenceIndex', 'toolCallId', 'result', 'isError')).toEqual([
      { type: 'ToolCallRequested', roundIndex: 0, sequenceIndex: 0, toolCallId: 'call_a' },
      { type: 'ToolCallRequested', roundIndex: 0, sequenceIndex: 1, toolCallId: 'call_b' },
      { type: 'ToolResultReceived', roundIndex: 0, sequenceIndex: 1, toolCallId: 'call_b', result: 'no such city', isError: true },
      { type: 'ToolResultReceived', roundIndex: 0, sequenceIndex: 0, toolCallId: 'call_a', result: { tempC: 18 }, isError: false },
      { type: 'ToolCallRequested', roundIndex: 1, sequenceIndex: 0, toolCallId: 'call_c' },
      { type: 'ToolResultReceived', roundIndex: 1, sequenceIndex: 0, toolCallId: 'call_c', result: 'umbrella', isError: false },
      { type: 'RunCompleted' },
    ]);
    // The second round was passed as a message: its call's tokens are not known.
    expect(events.at(-1)).toMatchObject({
      assistantMessageId: 'msg-final',
      finishReason: 'stop',
      usage: [
        { inputTokens: 10, outputTokens: 4, model: 'gpt-test' },
        { inputTokens: 30, outputTokens: 12, model: 'gpt-test' },
      ],
    });
  });

  it('ends with tool_limit after a last round of tools, counting that completion once', async () => {
    const { run, events } = capturingRun();
    const recorder = recordOpenAiToolLoop(run);
    const asking = completion('cc-1', [call('call_a', 'search', '{"q":"x"}')], [10, 2]);
    await recorder.assistantMessage(asking);
    await recorder.toolOutput('call_a', 'found');
    await recorder.finish(asking);
    expect(events.at(-1)).toMatchObject({
      type: 'RunCompleted',
      assistantMessageId: 'cc-1',
      finishReason: 'tool_limit',
      usage: [{ inputTokens: 10, outputTokens: 2, model: 'gpt-test' }],
    });
  });

  it('records the same round again under the same ids when a message is recorded twice (a retry)', async () => {
    const { run, events } = capturingRun();
    const recorder = recordOpenAiToolLoop(run);
    const asking = completion('cc-1', [call('call_a', 'search', '{}')], [1, 1]);
    await recorder.assistantMessage(asking);
    await recorder.assistantMessage(asking);
    expect(events.map((e) => [e.roundIndex, e.eventId])).toEqual([
      [0, events[0].eventId],
      [0, events[0].eventId],
    ]);
    expect(recorder.usage).toHaveLength(1);
  });

  it('records nothing for a message without tool calls', async () => {
    const { run, events } = capturingRun();
    const recorder = recordOpenAiToolLoop(run);
    expect(await recorder.assistantMessage(completion('cc-1', undefined, [5, 5]))).toBeUndefined();
    expect(events).toEqual([]);
  });

  it('refuses an output for a call it did not record', async () => {
    const { run, events } = capturingRun();
    await expect(recordOpenAiToolLoop(run).toolOutput('call_zz', 'x')).rejects.toThrow(/no recorded tool call has the id "call_zz"/);
    expect(events).toEqual([]);
  });

  it('needs an assistant message id when finish gets a bare message', async () => {
    const { run } = capturingRun();
    const answer = completion('cc-1', undefined, [1, 1]).choices[0].message;
    await expect(recordOpenAiToolLoop(run).finish(answer)).rejects.toThrow(/assistantMessageId is required/);
  });

  it('records a failure with the code and message of what was thrown', async () => {
    const { run, events } = capturingRun();
    await recordOpenAiToolLoop(run).fail(Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' }));
    expect(events).toEqual([expect.objectContaining({ type: 'RunFailed', error: { code: 'ECONNRESET', message: 'socket hang up' } })]);
  });

  it('records a failure with the tokens of the completions seen before it', async () => {
    const { run, events } = capturingRun();
    const recorder = recordOpenAiToolLoop(run);
    await recorder.assistantMessage(completion('cc-1', [call('call_a', 'get_weather', '{}')], [10, 4]));
    await recorder.fail(new Error('timeout'));
    expect(events.at(-1)).toMatchObject({ type: 'RunFailed', usage: [{ inputTokens: 10, outputTokens: 4, model: 'gpt-test' }] });
  });

  it("opens the run with the user's message id from a publisher and a scope; a RunPublisher's fixed scope must already have it", () => {
    const { run } = capturingRun();
    const scope = { tenantId: 't', conversationId: 'c', channel: 'web', runId: 'r' };
    const publisher = { run: jest.fn(() => run) };

    expect(recordOpenAiToolLoop({ publisher, scope }, { userMessageId: 'msg-user-3' }).run).toBe(run);
    expect(publisher.run).toHaveBeenCalledWith({ ...scope, userMessageId: 'msg-user-3' });
    expect(() => recordOpenAiToolLoop(run, { userMessageId: 'msg-user-3' })).toThrow("a RunPublisher's scope is fixed");
  });

  describe('citedSourcesFromAnswer', () => {
    const answering = (content: string) => {
      const done = completion('cc-2', undefined, [20, 5]);
      done.choices[0].message.content = content;
      return done;
    };
    /** A search round, then `last`; the RunCompleted the recorder publishes. */
    async function loop(last: ChatCompletion | ChatCompletionAssistantMessageParam, options: OpenAiToolLoopOptions) {
      const { run, events } = capturingRun();
      const recorder = recordOpenAiToolLoop(run, options);
      await recorder.assistantMessage(completion('cc-1', [call('call_s', 'web_search', '{"q":"rain"}')], [10, 2]));
      await recorder.toolOutput('call_s', { results: [{ sourceNumber: 1 }, { sourceNumber: 2 }] });
      await recorder.finish(last, { assistantMessageId: 'msg-final' });
      return events.at(-1)!;
    }

    it.each<[string, boolean | undefined, string, number[] | undefined]>([
      ['on: the numbers the answer cites', true, 'Rain [source4], says the radar [source2].', [2, 4]],
      ['on: an answer that cites nothing is []', true, 'Rain.', []],
      ['off: left out', false, 'Rain [source4].', undefined],
      ['by default: left out', undefined, 'Rain [source4].', undefined],
    ])('%s', async (_d, citedSourcesFromAnswer, text, expected) => {
      const completed = await loop(answering(text), citedSourcesFromAnswer === undefined ? {} : { citedSourcesFromAnswer });

      expect(completed).toMatchObject({ type: 'RunCompleted', finishReason: 'stop' });
      if (expected === undefined) expect(completed).not.toHaveProperty('citedSources');
      else expect(completed.citedSources).toEqual(expected);
    });

    it("reads the text parts of a message the host kept to send back (not a refusal's)", async () => {
      const kept: ChatCompletionAssistantMessageParam = {
        role: 'assistant',
        content: [
          { type: 'text', text: 'Rain [source2]' },
          { type: 'refusal', refusal: 'not [source9]' },
          { type: 'text', text: ' and wind [source5].' },
        ],
      };
      expect(await loop(kept, { citedSourcesFromAnswer: true })).toMatchObject({ citedSources: [2, 5] });
    });

    it('leaves them out when the last message still asks for tools (no answer: a later run may cite the results), and from RunFailed', async () => {
      const asking = completion('cc-2', [call('call_t', 'web_search', '{}')], [1, 1]);
      asking.choices[0].message.content = '[source1]';
      const completed = await loop(asking, { citedSourcesFromAnswer: true });
      expect(completed).toMatchObject({ type: 'RunCompleted', finishReason: 'tool_limit' });
      expect(completed).not.toHaveProperty('citedSources');

      const { run, events } = capturingRun();
      await recordOpenAiToolLoop(run, { citedSourcesFromAnswer: true }).fail(new Error('timeout'));
      expect(events).toHaveLength(1);
      expect(events[0]).toMatchObject({ type: 'RunFailed' });
      expect(events[0]).not.toHaveProperty('citedSources');
    });
  });
});

describe('OpenAiToolLoopRecorder with the Responses API', () => {
  const reasoningItem = {
    type: 'reasoning',
    id: 'rs_68a1f0c2d4e81',
    summary: [{ type: 'summary_text', text: 'Look the order up, then refund.' }],
    encrypted_content: 'gAAAAABoofDC',
  } as const;
  const functionCall = (callId: string, name: string, args: string, id?: string) => ({
    type: 'function_call' as const,
    call_id: callId,
    name,
    arguments: args,
    ...(id === undefined ? {} : { id }),
    status: 'completed' as const,
  });
  /** A response as the API returns it (only the fields the recorder reads are typed by hand here). */
  const response = (id: string, output: unknown[], usage: [number, number]): OpenAiResponse =>
    ({
      id,
      object: 'response',
      created_at: 1,
      model: 'gpt-5',
      status: 'completed',
      output,
      usage: { input_tokens: usage[0], output_tokens: usage[1], total_tokens: usage[0] + usage[1] },
    }) as unknown as OpenAiResponse;
  const message = (text: string) => ({
    type: 'message',
    id: 'msg_1',
    role: 'assistant',
    status: 'completed',
    content: [{ type: 'output_text', text, annotations: [] }],
  });

  it("records a response's reasoning items and fc_ ids with its round, before its calls, and the loop's end", async () => {
    const { run, events } = capturingRun();
    const recorder = recordOpenAiToolLoop(run);
    const first = response(
      'resp_1',
      [
        reasoningItem,
        message('Checking the order.'),
        functionCall('call_a', 'get_order', '{"id":"A-1"}', 'fc_a'),
        functionCall('call_b', 'get_note', '{}', 'fc_b'),
      ],
      [40, 30],
    );
    const round = await recorder.response(first);
    expect(round).toEqual({
      roundIndex: 0,
      calls: [
        { sequenceIndex: 0, toolCallId: 'call_a', toolName: 'get_order', arguments: { id: 'A-1' } },
        { sequenceIndex: 1, toolCallId: 'call_b', toolName: 'get_note', arguments: {} },
      ],
    });
    expect(await recorder.functionCallOutput('call_a', { status: 'damaged' })).toEqual({
      type: 'function_call_output',
      call_id: 'call_a',
      output: '{"status":"damaged"}',
    });
    await recorder.functionCallOutput('call_b', 'refund approved by phone');
    // A retry of the same response records the same round again (deduplicated by its events' ids).
    await recorder.response(first);
    await recorder.finish(response('resp_2', [message('Refunded.')], [90, 5]));

    expect(events.map((e) => e.type)).toEqual([
      'ModelResponseReceived',
      'ToolCallRequested',
      'ToolCallRequested',
      'ToolResultReceived',
      'ToolResultReceived',
      'ToolCallRequested',
      'ToolCallRequested',
      'RunCompleted',
    ]);
    expect(events[0]).toMatchObject({
      roundIndex: 0,
      provider: 'openai',
      model: 'gpt-5',
      text: 'Checking the order.',
      callItemIds: { call_a: 'fc_a', call_b: 'fc_b' },
    });
    // The reasoning item as the API sent it, byte for byte.
    expect(JSON.stringify(events[0].reasoning)).toBe(JSON.stringify([reasoningItem]));
    expect(events[5].eventId).toBe(events[1].eventId);
    expect(events.at(-1)).toMatchObject({
      finishReason: 'stop',
      assistantMessageId: 'resp_2',
      usage: [
        { inputTokens: 40, outputTokens: 30, model: 'gpt-5' },
        { inputTokens: 90, outputTokens: 5, model: 'gpt-5' },
      ],
    });
  });

  it('publishes no model response for a round without reasoning state, and ends with tool_limit after a last round of calls', async () => {
    const { run, events } = capturingRun();
    const recorder = recordOpenAiToolLoop(run);
    const last = response('resp_1', [functionCall('call_a', 'get_order', '{}')], [10, 2]);
    await recorder.response(last);
    await recorder.finish(last);
    expect(events.map((e) => e.type)).toEqual(['ToolCallRequested', 'RunCompleted']);
    expect(events[1]).toMatchObject({ finishReason: 'tool_limit', usage: [{ inputTokens: 10, outputTokens: 2 }] });
    expect(await recorder.response(response('resp_2', [message('no calls')], [1, 1]))).toBeUndefined();
  });

  it('takes every reasoning item in order and each call with its fc_ id, whatever the output interleaves', () => {
    const item = fc.oneof(
      fc.record({
        kind: fc.constant('reasoning' as const),
        id: fc.stringMatching(/^rs_[a-z0-9]{1,6}$/),
        text: fc.string({ maxLength: 6 }),
        encrypted: fc.option(fc.base64String({ maxLength: 12 }), { nil: undefined }),
      }),
      fc.record({ kind: fc.constant('call' as const), id: fc.option(fc.stringMatching(/^fc_[a-z0-9]{1,6}$/), { nil: undefined }) }),
      fc.record({ kind: fc.constant('message' as const), text: fc.string({ maxLength: 6 }) }),
    );
    fc.assert(
      fc.property(fc.array(item, { maxLength: 8 }), (kinds) => {
        const output = kinds.map((k, i) =>
          k.kind === 'reasoning'
            ? {
                type: 'reasoning',
                id: k.id,
                summary: [{ type: 'summary_text', text: k.text }],
                ...(k.encrypted === undefined ? {} : { encrypted_content: k.encrypted }),
              }
            : k.kind === 'call'
              ? functionCall(`call_${i}`, 'tool', '{}', k.id)
              : message(k.text),
        );
        const round = responseRoundOf(response('resp', output, [1, 1]));
        const reasoning = output.filter((o) => o.type === 'reasoning');
        const calls = output.filter((o): o is ReturnType<typeof functionCall> => o.type === 'function_call');
        expect(round.calls.map((c) => [c.sequenceIndex, c.toolCallId])).toEqual(calls.map((c, i) => [i, c.call_id]));
        if (calls.length === 0) return expect(round.reasoning).toBeUndefined();
        expect(JSON.stringify(round.reasoning?.items ?? [])).toBe(JSON.stringify(reasoning));
        const ids = Object.fromEntries(calls.flatMap((c) => (c.id === undefined ? [] : [[c.call_id, c.id]])));
        expect(round.reasoning?.callItemIds ?? {}).toEqual(ids);
      }),
    );
  });
});
