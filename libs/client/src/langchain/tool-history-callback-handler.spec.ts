import { AIMessage, type AIMessageFields, type BaseMessage, HumanMessage, ToolMessage } from '@langchain/core/messages';
import { tool } from '@langchain/core/tools';
import { Command, interrupt, MemorySaver } from '@langchain/langgraph';
// The repo's moduleResolution ("node") does not read package exports: the types come from the file the export names.
import type * as Prebuilt from '@langchain/langgraph/dist/prebuilt/index.js';
import { z } from 'zod';
import { type PublishedEvent, RunPublisher, type RunScope } from '../tool-event-publisher';
import { ToolHistoryPublishError } from './ordered-publish-queue';
import { call, getOrder, SCRIPTED_MODEL_NAME, ScriptedChatModel, type ScriptedReply, tools, usage } from './scripted-chat-model.fixture';
import { ToolHistoryCallbackHandler, type ToolHistoryCallbackHandlerOptions } from './tool-history-callback-handler';

const { createReactAgent } = jest.requireActual<typeof Prebuilt>('@langchain/langgraph/prebuilt');

const scope: RunScope = { tenantId: 't1', conversationId: 'c1', channel: 'web', runId: 'run-1' };

interface Recorded extends Record<string, unknown> {
  type: string;
}

/**
 * A RunPublisher whose events land in a list (the broker is the e2e test's
 * business); `fail` picks events to refuse. `resultTools`: the tool each
 * result was published for (what picks the publisher's per-tool result limit).
 */
function recordingRun(fail: (type: string, fields: Record<string, unknown>) => boolean = () => false) {
  const events: Recorded[] = [];
  const resultTools: Array<string | undefined> = [];
  const run = new RunPublisher(scope, async (batch): Promise<PublishedEvent[]> => {
    await new Promise((r) => setImmediate(r));
    const refused = batch.find(({ identity, fields }) => fail(identity.type, fields));
    if (refused) throw new Error(`broker refused ${refused.identity.type}`);
    return batch.map(({ identity, fields, toolName }) => {
      events.push({ type: identity.type, ...fields });
      if (identity.type === 'ToolResultReceived') resultTools.push(toolName);
      return {
        eventId: `e${events.length}`,
        type: identity.type,
        partition: 0,
        offset: String(events.length - 1),
        consistencyToken: `ct1:k:agent.tool-events:0:${events.length - 1}`,
      };
    });
  });
  return { run, events, resultTools };
}

/** Two rounds (two parallel calls, then one), then the answer. */
const twoRoundScript: ScriptedReply[] = [
  {
    content: '',
    tool_calls: [call('call_a', 'get_order', { orderId: 'A-1' }), call('call_b', 'get_customer', { id: 7 })],
    usage_metadata: usage(10, 5),
  },
  { content: '', tool_calls: [call('call_c', 'get_order', { orderId: 'B-2' })], usage_metadata: usage(20, 6) },
  { content: 'Both orders have shipped, Ada.', usage_metadata: usage(30, 7) },
];

describe('ToolHistoryCallbackHandler with the prebuilt ReAct agent', () => {
  it('records each round of calls, their results and the completion, all published when invoke() returns', async () => {
    const { run, events } = recordingRun();
    const handler = new ToolHistoryCallbackHandler(run);
    const agent = createReactAgent({ llm: new ScriptedChatModel(twoRoundScript), tools });

    const result = await agent.invoke({ messages: [new HumanMessage('Where are orders A-1 and B-2?')] }, { callbacks: [handler] });

    const final = result.messages.at(-1)!;
    expect(final.content).toBe('Both orders have shipped, Ada.');
    // Calls before their results; the two parallel results in either order.
    expect(events.slice(0, 2)).toEqual([
      {
        type: 'ToolCallRequested',
        roundIndex: 0,
        sequenceIndex: 0,
        toolCallId: 'call_a',
        toolName: 'get_order',
        arguments: { orderId: 'A-1' },
      },
      { type: 'ToolCallRequested', roundIndex: 0, sequenceIndex: 1, toolCallId: 'call_b', toolName: 'get_customer', arguments: { id: 7 } },
    ]);
    expect(events.slice(2, 4)).toEqual(
      expect.arrayContaining([
        { type: 'ToolResultReceived', roundIndex: 0, sequenceIndex: 0, toolCallId: 'call_a', result: 'order A-1: shipped', isError: false },
        {
          type: 'ToolResultReceived',
          roundIndex: 0,
          sequenceIndex: 1,
          toolCallId: 'call_b',
          result: '{"id":7,"name":"Ada"}',
          isError: false,
        },
      ]),
    );
    expect(events.slice(4)).toEqual([
      {
        type: 'ToolCallRequested',
        roundIndex: 1,
        sequenceIndex: 0,
        toolCallId: 'call_c',
        toolName: 'get_order',
        arguments: { orderId: 'B-2' },
      },
      { type: 'ToolResultReceived', roundIndex: 1, sequenceIndex: 0, toolCallId: 'call_c', result: 'order B-2: shipped', isError: false },
      {
        type: 'RunCompleted',
        assistantMessageId: final.id,
        finishReason: 'stop',
        usage: [
          { inputTokens: 10, outputTokens: 5, model: SCRIPTED_MODEL_NAME },
          { inputTokens: 20, outputTokens: 6, model: SCRIPTED_MODEL_NAME },
          { inputTokens: 30, outputTokens: 7, model: SCRIPTED_MODEL_NAME },
        ],
      },
    ]);
    expect(final.id).toEqual(expect.any(String));
    await expect(handler.settled()).resolves.toHaveLength(7);
  });

  it('takes the assistant message id from its option, and the scope from a publisher', async () => {
    const { run, events } = recordingRun();
    const publisher = { run: jest.fn(() => run) };
    const handler = new ToolHistoryCallbackHandler({ publisher, scope }, { assistantMessageId: 'host-msg-9' });
    const agent = createReactAgent({ llm: new ScriptedChatModel([{ content: 'Hello.' }]), tools });

    await agent.invoke({ messages: [new HumanMessage('hi')] }, { callbacks: [handler] });

    expect(publisher.run).toHaveBeenCalledWith(scope);
    // A run without tool calls and without usage reported: completed, no usage.
    expect(events).toEqual([{ type: 'RunCompleted', assistantMessageId: 'host-msg-9', finishReason: 'stop' }]);
  });

  it('records a tool that throws as an error result, and the run goes on', async () => {
    const { run, events } = recordingRun();
    const handler = new ToolHistoryCallbackHandler(run);
    const model = new ScriptedChatModel([
      { content: '', tool_calls: [call('call_pay', 'charge_card', { amount: 12 })] },
      { content: 'The card was declined.' },
    ]);
    const agent = createReactAgent({ llm: model, tools });

    await agent.invoke({ messages: [new HumanMessage('pay')] }, { callbacks: [handler] });

    expect(events.map((e) => e.type)).toEqual(['ToolCallRequested', 'ToolResultReceived', 'RunCompleted']);
    expect(events[1]).toEqual({
      type: 'ToolResultReceived',
      roundIndex: 0,
      sequenceIndex: 0,
      toolCallId: 'call_pay',
      result: 'Error: card declined',
      isError: true,
    });
    // What the model was told is LangGraph's business: an error ToolMessage.
    const told = model.received[1].at(-1) as ToolMessage;
    expect(told.status).toBe('error');
  });

  it('answers calls no tool ran (unknown tool, arguments the schema refuses) with the error ToolMessage the model got', async () => {
    const { run, events } = recordingRun();
    const handler = new ToolHistoryCallbackHandler(run);
    const model = new ScriptedChatModel([
      { content: '', tool_calls: [call('call_x', 'no_such_tool', {}), call('call_y', 'get_order', { orderId: 42 })] },
      { content: 'Sorry.' },
    ]);
    const agent = createReactAgent({ llm: model, tools });

    await agent.invoke({ messages: [new HumanMessage('?')] }, { callbacks: [handler] });

    const results = events.filter((e) => e.type === 'ToolResultReceived');
    expect(results).toHaveLength(2);
    expect(results).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ toolCallId: 'call_x', sequenceIndex: 0, isError: true, result: expect.stringContaining('not found') }),
        expect.objectContaining({
          toolCallId: 'call_y',
          sequenceIndex: 1,
          isError: true,
          result: expect.stringContaining('did not match'),
        }),
      ]),
    );
    expect(events.at(-1)).toMatchObject({ type: 'RunCompleted', finishReason: 'stop' });
  });

  it('matches tool runs to calls the model gave no id, by name and arguments (the service derives their ids)', async () => {
    const { run, events } = recordingRun();
    const handler = new ToolHistoryCallbackHandler(run);
    const model = new ScriptedChatModel([
      {
        content: '',
        tool_calls: [
          { name: 'get_order', args: { orderId: 'A-1' } },
          { name: 'get_order', args: { orderId: 'B-2' } },
        ],
      },
      { content: 'Both shipped.' },
    ]);
    const agent = createReactAgent({ llm: model, tools });

    await agent.invoke({ messages: [new HumanMessage('?')] }, { callbacks: [handler] });

    const results = events.filter((e) => e.type === 'ToolResultReceived').map((e) => [e.sequenceIndex, e.toolCallId, e.result]);
    expect(results.sort()).toEqual([
      [0, '', 'order A-1: shipped'],
      [1, '', 'order B-2: shipped'],
    ]);
  });

  it('publishes RunFailed when the agent run fails, after what was recorded before', async () => {
    const { run, events } = recordingRun();
    const handler = new ToolHistoryCallbackHandler(run);
    const model = new ScriptedChatModel([
      { content: '', tool_calls: [call('call_a', 'get_order', { orderId: 'A-1' })] },
      Object.assign(new Error('model overloaded'), { lc_error_code: 'MODEL_RATE_LIMIT' }),
    ]);
    const agent = createReactAgent({ llm: model, tools });

    await expect(agent.invoke({ messages: [new HumanMessage('?')] }, { callbacks: [handler] })).rejects.toThrow('model overloaded');

    expect(events.map((e) => e.type)).toEqual(['ToolCallRequested', 'ToolResultReceived', 'RunFailed']);
    expect(events[2]).toEqual({ type: 'RunFailed', error: { code: 'MODEL_RATE_LIMIT', message: 'model overloaded' } });
  });

  /** A ReAct agent whose one call (`charge_card`) waits until aborted; resolves `charging` once the tool runs. */
  function agentChargingSlowly() {
    let charging!: () => void;
    const charged = new Promise<void>((resolve) => (charging = resolve));
    const chargeSlowly = tool(
      async () => {
        charging();
        return new Promise<string>(() => undefined);
      },
      {
        name: 'charge_card',
        description: 'Charges the card (and waits on the payment provider).',
        schema: z.object({ amount: z.number() }),
      },
    );
    const model = new ScriptedChatModel([{ content: '', tool_calls: [call('call_c', 'charge_card', { amount: 5 })] }]);
    return { agent: createReactAgent({ llm: model, tools: [chargeSlowly] }), charged };
  }

  const CHARGE_REQUESTED = {
    type: 'ToolCallRequested',
    roundIndex: 0,
    sequenceIndex: 0,
    toolCallId: 'call_c',
    toolName: 'charge_card',
    arguments: { amount: 5 },
  };

  /** Runs the agent, aborts it with `reason` once the charge is under way, and returns what it rejected with and recorded. */
  async function abortedWhileCharging(reason: unknown) {
    const { run, events } = recordingRun();
    const handler = new ToolHistoryCallbackHandler(run);
    const { agent, charged } = agentChargingSlowly();
    const controller = new AbortController();
    const turn = agent.invoke({ messages: [new HumanMessage('?')] }, { callbacks: [handler], signal: controller.signal });
    await charged;
    controller.abort(reason);
    const rejection = await turn.then(
      () => undefined,
      (error: unknown) => error,
    );
    await handler.settled();
    return { rejection, events };
  }

  const RUN_ABORTED = { type: 'RunFailed', error: { code: 'aborted', message: 'the run was aborted before it completed' } };

  it.each([
    ['without a reason', undefined],
    ['with an AbortError of its own', new DOMException('the user pressed stop', 'AbortError')],
  ])('fails a run the host aborts in a tool (%s) aborted, the call without a made-up result', async (_, reason) => {
    const { rejection, events } = await abortedWhileCharging(reason);

    expect(String(rejection)).toMatch(/abort/i);
    // The charge may or may not have gone out: replay leaves the call out, or shows a side-effect tool's as interrupted.
    expect(events).toEqual([CHARGE_REQUESTED, RUN_ABORTED]);
  });

  it("reads a tool aborted with the host's own Error as that error (the tool's result); the run is still aborted", async () => {
    const { rejection, events } = await abortedWhileCharging(new Error('the user pressed stop'));

    expect(rejection).toEqual(new Error('the user pressed stop'));
    expect(events).toEqual([
      CHARGE_REQUESTED,
      {
        type: 'ToolResultReceived',
        toolCallId: 'call_c',
        roundIndex: 0,
        sequenceIndex: 0,
        result: 'Error: the user pressed stop',
        isError: true,
      },
      RUN_ABORTED,
    ]);
  });

  it('completes with finishReason tool_limit (or the configured one) when the loop ends right after executing tools', async () => {
    const lookUp = tool(async () => 'done', { name: 'look_up', description: 'Looks up.', schema: z.object({}), returnDirect: true });
    for (const [options, expected] of [
      [{}, 'tool_limit'],
      [{ finishReasonAfterTools: 'terminated' }, 'terminated'],
    ] as const) {
      const { run, events } = recordingRun();
      const handler = new ToolHistoryCallbackHandler(run, options);
      const agent = createReactAgent({
        llm: new ScriptedChatModel([{ content: '', tool_calls: [call('call_l', 'look_up', {})] }]),
        tools: [lookUp],
      });

      await agent.invoke({ messages: [new HumanMessage('?')] }, { callbacks: [handler] });

      expect(events.map((e) => e.type)).toEqual(['ToolCallRequested', 'ToolResultReceived', 'RunCompleted']);
      expect(events[2]).toMatchObject({ finishReason: expected });
    }
  });

  it('leaves the run open at a LangGraph interrupt, as an approval request, and goes on with it when the run resumes', async () => {
    const approve = tool(async ({ amount }: { amount: number }) => `approved ${amount} by ${String(interrupt({ amount }))}`, {
      name: 'approve',
      description: 'Asks a human.',
      schema: z.object({ amount: z.number() }),
    });
    const { run, events } = recordingRun();
    const handler = new ToolHistoryCallbackHandler(run);
    const model = new ScriptedChatModel([
      { content: '', tool_calls: [call('call_ok', 'approve', { amount: 5 })] },
      { content: 'Approved.' },
    ]);
    const agent = createReactAgent({ llm: model, tools: [approve], checkpointer: new MemorySaver() });
    const config = { configurable: { thread_id: 'thread-1' }, callbacks: [handler] };

    await agent.invoke({ messages: [new HumanMessage('approve 5')] }, config);
    // The interrupt's value names no reason: the request has none. No result, no failure.
    expect(events).toEqual([
      expect.objectContaining({ type: 'ToolCallRequested', toolCallId: 'call_ok' }),
      { type: 'ToolApprovalRequested', roundIndex: 0, sequenceIndex: 0, toolCallId: 'call_ok' },
    ]);

    // A resume value that says nothing about approval: no decision, the tool's result as usual.
    await agent.invoke(new Command({ resume: 'Grace' }), config);
    expect(events.map((e) => e.type)).toEqual(['ToolCallRequested', 'ToolApprovalRequested', 'ToolResultReceived', 'RunCompleted']);
    expect(events[2]).toMatchObject({ toolCallId: 'call_ok', result: 'approved 5 by Grace', isError: false });
    expect(events[3]).toMatchObject({ finishReason: 'stop' });
  });

  it('does not count the model and tool calls a tool makes itself as rounds of the run', async () => {
    const inner = new ScriptedChatModel([{ content: '', tool_calls: [call('inner_1', 'get_order', { orderId: 'Z' })] }]);
    const research = tool(async (_input, config) => String((await inner.invoke([new HumanMessage('inner')], config)).tool_calls?.length), {
      name: 'research',
      description: 'Asks another model.',
      schema: z.object({}),
    });
    const { run, events } = recordingRun();
    const handler = new ToolHistoryCallbackHandler(run);
    const agent = createReactAgent({
      llm: new ScriptedChatModel([{ content: '', tool_calls: [call('call_r', 'research', {})] }, { content: 'Found it.' }]),
      tools: [research],
    });

    await agent.invoke({ messages: [new HumanMessage('?')] }, { callbacks: [handler] });

    expect(inner.received).toHaveLength(1);
    expect(events).toEqual([
      { type: 'ToolCallRequested', roundIndex: 0, sequenceIndex: 0, toolCallId: 'call_r', toolName: 'research', arguments: {} },
      { type: 'ToolResultReceived', roundIndex: 0, sequenceIndex: 0, toolCallId: 'call_r', result: '1', isError: false },
      expect.objectContaining({ type: 'RunCompleted', finishReason: 'stop' }),
    ]);
  });

  it('reports a publication that failed (settled() rejects, onPublishError hears) and still publishes the rest in order', async () => {
    const { run, events } = recordingRun((type, fields) => type === 'ToolResultReceived' && fields.toolCallId === 'call_b');
    const onPublishError = jest.fn();
    const warn = jest.spyOn(console, 'warn').mockImplementation(() => undefined);
    try {
      const handler = new ToolHistoryCallbackHandler(run, { onPublishError });
      const agent = createReactAgent({ llm: new ScriptedChatModel(twoRoundScript), tools });

      await agent.invoke({ messages: [new HumanMessage('?')] }, { callbacks: [handler] });

      const error = await handler.settled().then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(ToolHistoryPublishError);
      const failure = error as ToolHistoryPublishError;
      expect(failure.failures.map((f) => f.event)).toEqual(['ToolResultReceived round 0 call 1 (get_customer call_b)']);
      expect(failure.published).toHaveLength(6);
      expect(onPublishError).toHaveBeenCalledWith(failure.failures[0]);
      expect(events.map((e) => e.type)).toEqual([
        'ToolCallRequested',
        'ToolCallRequested',
        'ToolResultReceived',
        'ToolCallRequested',
        'ToolResultReceived',
        'RunCompleted',
      ]);
      // LangChain logs a handler's failure too.
      expect(warn).toHaveBeenCalledWith(expect.stringContaining('broker refused ToolResultReceived'));
    } finally {
      warn.mockRestore();
    }
  });

  it('fails the agent run on a failed publication when raiseError is set', async () => {
    const { run } = recordingRun((type) => type === 'ToolCallRequested');
    const error = jest.spyOn(console, 'error').mockImplementation(() => undefined);
    try {
      const handler = new ToolHistoryCallbackHandler(run, { raiseError: true });
      const agent = createReactAgent({ llm: new ScriptedChatModel(twoRoundScript), tools });

      await expect(agent.invoke({ messages: [new HumanMessage('?')] }, { callbacks: [handler] })).rejects.toThrow(
        'broker refused ToolCallRequested',
      );
    } finally {
      error.mockRestore();
    }
  });

  it('lets the agent run on without waiting when awaitPublishing is false; settled() waits for every event', async () => {
    const { run, events } = recordingRun();
    const handler = new ToolHistoryCallbackHandler(run, { awaitPublishing: false });
    expect(handler.awaitHandlers).toBe(false);
    const agent = createReactAgent({ llm: new ScriptedChatModel(twoRoundScript), tools });

    await agent.invoke({ messages: [new HumanMessage('?')] }, { callbacks: [handler] });
    const published = await handler.settled();

    expect(published).toHaveLength(7);
    expect(events.at(-1)).toMatchObject({ type: 'RunCompleted', finishReason: 'stop' });
  });

  it('records one agent run: a second one with the same handler is reported, not mixed in', async () => {
    const { run, events } = recordingRun();
    const handler = new ToolHistoryCallbackHandler(run);
    const agent = createReactAgent({ llm: new ScriptedChatModel([{ content: 'one' }, twoRoundScript[0], { content: 'two' }]), tools });

    await agent.invoke({ messages: [new HumanMessage('1')] }, { callbacks: [handler] });
    await agent.invoke({ messages: [new HumanMessage('2')] }, { callbacks: [handler] });

    expect(events.map((e) => e.type)).toEqual(['RunCompleted']);
    await expect(handler.settled()).rejects.toThrow('create a handler per agent run');
  });

  it('keeps LangChain from copying it: the copy is the handler itself', () => {
    const handler = new ToolHistoryCallbackHandler(recordingRun().run);
    expect(handler.copy()).toBe(handler);
    expect(handler.awaitHandlers).toBe(true);
  });

  it('records a hand-written loop wrapped in a runnable, with the message it got from the model', async () => {
    const { RunnableLambda } = await import('@langchain/core/runnables');
    const { run, events } = recordingRun();
    const handler = new ToolHistoryCallbackHandler(run);
    const model = new ScriptedChatModel([twoRoundScript[1], twoRoundScript[2]]).bindTools([getOrder]);
    const loop = RunnableLambda.from(async (question: string) => {
      const messages: BaseMessage[] = [new HumanMessage(question)];
      for (;;) {
        const reply = (await model.invoke(messages)) as AIMessage;
        messages.push(reply);
        if (!reply.tool_calls?.length) return reply;
        for (const toolCall of reply.tool_calls) messages.push((await getOrder.invoke(toolCall)) as ToolMessage);
      }
    });

    const answer = await loop.invoke('Where is B-2?', { callbacks: [handler] });

    expect(events).toEqual([
      expect.objectContaining({ type: 'ToolCallRequested', roundIndex: 0, toolCallId: 'call_c' }),
      expect.objectContaining({ type: 'ToolResultReceived', roundIndex: 0, toolCallId: 'call_c', result: 'order B-2: shipped' }),
      expect.objectContaining({ type: 'RunCompleted', assistantMessageId: answer.id, finishReason: 'stop' }),
    ]);
  });
});

describe('ToolHistoryCallbackHandler and the cited sources of the answer', () => {
  /** Looks an order up, then answers `answer`; the RunCompleted the handler publishes. */
  async function answering(answer: AIMessageFields['content'], options: ToolHistoryCallbackHandlerOptions) {
    const { run, events } = recordingRun();
    const handler = new ToolHistoryCallbackHandler(run, options);
    const model = new ScriptedChatModel([
      { content: '', tool_calls: [call('call_a', 'get_order', { orderId: 'A-1' })] },
      { content: answer },
    ]);
    await createReactAgent({ llm: model, tools }).invoke({ messages: [new HumanMessage('A-1?')] }, { callbacks: [handler] });
    return events.at(-1)!;
  }

  it.each<[string, boolean | undefined, string, number[] | undefined]>([
    ['on: the numbers the answer cites', true, 'Shipped [source4], says the carrier [source2].', [2, 4]],
    ['on: an answer that cites nothing is []', true, 'Shipped.', []],
    ['off: left out', false, 'Shipped [source4].', undefined],
    ['by default: left out', undefined, 'Shipped [source4].', undefined],
  ])('%s', async (_d, citedSourcesFromAnswer, text, expected) => {
    const completed = await answering(text, citedSourcesFromAnswer === undefined ? {} : { citedSourcesFromAnswer });

    expect(completed).toMatchObject({ type: 'RunCompleted', finishReason: 'stop' });
    if (expected === undefined) expect(completed).not.toHaveProperty('citedSources');
    else expect(completed.citedSources).toEqual(expected);
  });

  it("reads the text blocks of an answer's content", async () => {
    const blocks = [
      { type: 'text' as const, text: 'Shipped [source3]' },
      { type: 'text' as const, text: ', on time [source1].' },
    ];
    expect(await answering(blocks, { citedSourcesFromAnswer: true })).toMatchObject({ citedSources: [1, 3] });
  });

  it('leaves them out of a run that ends without an answer (a later run may cite its results), and of RunFailed', async () => {
    const lookUp = tool(async () => 'done', { name: 'look_up', description: 'Looks up.', schema: z.object({}), returnDirect: true });
    const afterTools = recordingRun();
    await createReactAgent({
      llm: new ScriptedChatModel([{ content: '[source1]', tool_calls: [call('call_l', 'look_up', {})] }]),
      tools: [lookUp],
    }).invoke(
      { messages: [new HumanMessage('?')] },
      { callbacks: [new ToolHistoryCallbackHandler(afterTools.run, { citedSourcesFromAnswer: true })] },
    );
    expect(afterTools.events.at(-1)).toMatchObject({ type: 'RunCompleted', finishReason: 'tool_limit' });
    expect(afterTools.events.at(-1)).not.toHaveProperty('citedSources');

    const approve = tool(async () => `approved by ${String(interrupt({}))}`, {
      name: 'approve',
      description: 'Asks.',
      schema: z.object({}),
    });
    const interrupted = recordingRun();
    await createReactAgent({
      llm: new ScriptedChatModel([{ content: '', tool_calls: [call('call_ok', 'approve', {})] }]),
      tools: [approve],
      checkpointer: new MemorySaver(),
    }).invoke(
      { messages: [new HumanMessage('?')] },
      {
        configurable: { thread_id: 'thread-cited' },
        callbacks: [new ToolHistoryCallbackHandler(interrupted.run, { interruptEndsRun: true, citedSourcesFromAnswer: true })],
      },
    );
    expect(interrupted.events.at(-1)).toMatchObject({ type: 'RunCompleted', finishReason: 'tool_limit' });
    expect(interrupted.events.at(-1)).not.toHaveProperty('citedSources');

    const failed = recordingRun();
    await expect(
      createReactAgent({ llm: new ScriptedChatModel([new Error('model overloaded')]), tools }).invoke(
        { messages: [new HumanMessage('?')] },
        { callbacks: [new ToolHistoryCallbackHandler(failed.run, { citedSourcesFromAnswer: true })] },
      ),
    ).rejects.toThrow('model overloaded');
    expect(failed.events).toEqual([{ type: 'RunFailed', error: { code: 'Error', message: 'model overloaded' } }]);
  });
});

describe('ToolHistoryCallbackHandler and LangGraph interrupts inside tools (approvals)', () => {
  /** A tool that asks a person first: interrupt() pauses the graph; the resume value is the answer. */
  const refund = tool(
    async ({ orderId, amount }: { orderId: string; amount: number }) => {
      const answer = interrupt({ reason: `Refund ${amount} EUR for ${orderId}?`, amount }) as { approved?: boolean } | string;
      const approved = typeof answer === 'string' ? answer === 'yes' : answer.approved === true;
      return approved ? `refunded ${amount} EUR for ${orderId}` : 'refund declined';
    },
    {
      name: 'refund',
      description: 'Refunds an order, once a person approves.',
      schema: z.object({ orderId: z.string(), amount: z.number() }),
    },
  );
  /** Round 0 looks the order up; round 1 asks to refund it (the call that waits); then the answer. */
  const script = (): ScriptedReply[] => [
    { content: '', tool_calls: [call('call_look', 'get_order', { orderId: 'A-1' })] },
    {
      content: '',
      tool_calls: [call('call_other', 'get_order', { orderId: 'B-2' }), call('call_refund', 'refund', { orderId: 'A-1', amount: 5 })],
    },
    { content: 'Done.' },
  ];
  const agentWith = (model: ScriptedChatModel) =>
    createReactAgent({ llm: model, tools: [getOrder, refund], checkpointer: new MemorySaver() });
  const request = {
    type: 'ToolApprovalRequested',
    roundIndex: 1,
    sequenceIndex: 1,
    toolCallId: 'call_refund',
    reason: 'Refund 5 EUR for A-1?',
  };

  it.each<[string, unknown, object | undefined, string]>([
    [
      'approved, with a reason and who',
      { approved: true, reason: 'goodwill', decidedBy: 'grace' },
      { approved: true, reason: 'goodwill', decidedBy: 'grace' },
      'refunded 5 EUR for A-1',
    ],
    ['denied, in a word', 'no', { approved: false, decidedBy: 'desk' }, 'refund declined'],
    ['answered in a way the handler does not read', { note: 'whatever' }, undefined, 'refund declined'],
  ])(
    'records the request, then on resume with the same handler the decision (%s) and the result, in one run',
    async (_case, resume, decision, result) => {
      const { run, events } = recordingRun();
      const handler = new ToolHistoryCallbackHandler(run, { decidedBy: 'desk' });
      const agent = agentWith(new ScriptedChatModel(script()));
      const config = { configurable: { thread_id: `thread-${_case}` }, callbacks: [handler] };

      await agent.invoke({ messages: [new HumanMessage('refund A-1')] }, config);
      expect(events.slice(-1)).toEqual([request]);
      expect(events.map((e) => e.type)).not.toContain('RunCompleted');

      await agent.invoke(new Command({ resume }), config);
      const after = events.slice(events.indexOf(events.find((e) => e.type === 'ToolApprovalRequested')!) + 1);
      expect(after).toEqual([
        ...(decision === undefined
          ? []
          : [{ type: 'ToolApprovalDecided', roundIndex: 1, sequenceIndex: 1, toolCallId: 'call_refund', ...decision }]),
        {
          type: 'ToolResultReceived',
          roundIndex: 1,
          sequenceIndex: 1,
          toolCallId: 'call_refund',
          result,
          isError: false,
        },
        expect.objectContaining({ type: 'RunCompleted', finishReason: 'stop' }),
      ]);
      await expect(handler.settled()).resolves.toHaveLength(events.length);
    },
  );

  it('with interruptEndsRun, completes the interrupted run; a later run resumes with its own handler and keeps the call of the first', async () => {
    const first = recordingRun();
    // The refund alone in its round: the later handler can tell it is the call that waited.
    const agent = agentWith(
      new ScriptedChatModel([
        script()[0],
        { content: '', tool_calls: [call('call_refund', 'refund', { orderId: 'A-1', amount: 5 })] },
        script()[2],
      ]),
    );
    const thread = { configurable: { thread_id: 'thread-two-runs' } };

    await agent.invoke(
      { messages: [new HumanMessage('refund A-1')] },
      { ...thread, callbacks: [new ToolHistoryCallbackHandler(first.run, { interruptEndsRun: true })] },
    );
    expect(first.events.map((e) => e.type)).toEqual([
      'ToolCallRequested',
      'ToolResultReceived',
      'ToolCallRequested',
      'ToolApprovalRequested',
      'RunCompleted',
    ]);
    expect(first.events[3]).toEqual({ ...request, sequenceIndex: 0 });
    // The last round's result reached no model yet.
    expect(first.events.at(-1)).toMatchObject({ type: 'RunCompleted', finishReason: 'tool_limit' });

    const second = recordingRun();
    await agent.invoke(new Command({ resume: { approved: true } }), { ...thread, callbacks: [new ToolHistoryCallbackHandler(second.run)] });

    // Placed by the agent's messages: round 1 of the run that began at the user's message.
    expect(second.events).toEqual([
      { type: 'ToolApprovalDecided', roundIndex: 1, sequenceIndex: 0, toolCallId: 'call_refund', approved: true },
      {
        type: 'ToolResultReceived',
        roundIndex: 1,
        sequenceIndex: 0,
        toolCallId: 'call_refund',
        result: 'refunded 5 EUR for A-1',
        isError: false,
      },
      expect.objectContaining({ type: 'RunCompleted', finishReason: 'stop' }),
    ]);
    // The call is the first run's: the result still names its tool for the publisher's per-tool limit.
    expect(second.resultTools).toEqual(['refund']);
  });

  it("takes a resumed call's round and sequence from the replay's pendingApprovals, and leaves the round's re-run calls to their first run", async () => {
    const agent = agentWith(new ScriptedChatModel(script()));
    const thread = { configurable: { thread_id: 'thread-listed' } };
    const first = recordingRun();
    await agent.invoke(
      { messages: [new HumanMessage('refund A-1')] },
      { ...thread, callbacks: [new ToolHistoryCallbackHandler(first.run, { interruptEndsRun: true })] },
    );
    // LangGraph ran the round's other call before the interrupt, and runs it again on resume.
    expect(first.events).toContainEqual(expect.objectContaining({ type: 'ToolResultReceived', toolCallId: 'call_other' }));

    const { run, events } = recordingRun();
    const pendingApprovals = [{ toolCallId: 'call_refund', roundIndex: 1, sequenceIndex: 1 }];
    await agent.invoke(new Command({ resume: 'yes' }), {
      ...thread,
      callbacks: [new ToolHistoryCallbackHandler(run, { pendingApprovals })],
    });

    expect(events).toEqual([
      { type: 'ToolApprovalDecided', roundIndex: 1, sequenceIndex: 1, toolCallId: 'call_refund', approved: true },
      {
        type: 'ToolResultReceived',
        roundIndex: 1,
        sequenceIndex: 1,
        toolCallId: 'call_refund',
        result: 'refunded 5 EUR for A-1',
        isError: false,
      },
      expect.objectContaining({ type: 'RunCompleted', finishReason: 'stop' }),
    ]);
  });

  it('without pendingApprovals, records nothing for a resumed round of several calls: which of them waited, the callbacks do not tell', async () => {
    const agent = agentWith(new ScriptedChatModel(script()));
    const thread = { configurable: { thread_id: 'thread-unlisted' } };
    await agent.invoke(
      { messages: [new HumanMessage('refund A-1')] },
      { ...thread, callbacks: [new ToolHistoryCallbackHandler(recordingRun().run, { interruptEndsRun: true })] },
    );

    const { run, events } = recordingRun();
    await agent.invoke(new Command({ resume: 'yes' }), { ...thread, callbacks: [new ToolHistoryCallbackHandler(run)] });

    expect(events).toEqual([expect.objectContaining({ type: 'RunCompleted', finishReason: 'stop' })]);
  });
});

describe('ToolHistoryCallbackHandler and the user message id', () => {
  it("gives the run the id of the agent input's last human message, or the one it is told", async () => {
    for (const [options, expected] of [
      [{}, 'user-msg-2'],
      [{ userMessageId: 'host-7' }, 'host-7'],
    ] as const) {
      const { run } = recordingRun();
      const publisher = { run: jest.fn(() => run) };
      const handler = new ToolHistoryCallbackHandler({ publisher, scope }, options);
      const agent = createReactAgent({ llm: new ScriptedChatModel([{ content: 'Hi.' }]), tools });
      const messages = [
        new HumanMessage({ id: 'user-msg-1', content: 'a' }),
        new AIMessage('b'),
        new HumanMessage({ id: 'user-msg-2', content: 'c' }),
      ];

      await agent.invoke({ messages }, { callbacks: [handler] });

      expect(publisher.run).toHaveBeenCalledWith({ ...scope, userMessageId: expected });
    }
  });

  it("refuses a userMessageId that a RunPublisher's fixed scope does not have", () => {
    expect(() => new ToolHistoryCallbackHandler(recordingRun().run, { userMessageId: 'm1' })).toThrow("a RunPublisher's scope is fixed");
  });
});
