import { AIMessage, type BaseMessage, HumanMessage, ToolMessage } from '@langchain/core/messages';
// The repo's moduleResolution ("node") does not read package exports: the types come from the file the export names.
import type * as Prebuilt from '@langchain/langgraph/dist/prebuilt/index.js';
import { OmissionReason, RunStatus, type SubscribedEvent, ToolEventPublisher, ToolHistoryClient } from '../../libs/client/src';
import { spliceToolHistory, toLangChainMessages, ToolHistoryCallbackHandler } from '../../libs/client/src/langchain';
import { call, ScriptedChatModel, tools, usage } from '../../libs/client/src/langchain/scripted-chat-model.fixture';
import { HOUR_LONG_FRESHNESS, startClientStack, stopClientStack } from '../support/client-stack';
import type { RunningStack } from '../support/running-stack';
import { uniqueName } from '../support/test-environment';
import { waitFor } from '../support/wait-for';

const { createReactAgent } = jest.requireActual<typeof Prebuilt>('@langchain/langgraph/prebuilt');

/** What a message list looks like to a test: type, content, and the tool call ids it carries or answers (and a ToolMessage's status). */
function shape(messages: readonly BaseMessage[], { status = true } = {}) {
  return messages.map((m) => {
    if (ToolMessage.isInstance(m))
      return { type: 'tool', toolCallId: m.tool_call_id, content: m.content, ...(status ? { status: m.status } : {}) };
    if (AIMessage.isInstance(m) && m.tool_calls?.length)
      return { type: 'ai', toolCalls: m.tool_calls.map((c) => ({ id: c.id, name: c.name, args: c.args })) };
    return { type: m.type, content: m.content };
  });
}

describe('@toolhistory/client/langchain: a LangGraph ReAct agent recorded through the real broker and service', () => {
  let stack: RunningStack;
  let publisher: ToolEventPublisher;
  let client: ToolHistoryClient;
  const tenantId = uniqueName('tenant');
  const conversationId = uniqueName('conv');
  const scope = (runId: string) => ({ tenantId, conversationId, channel: 'support', runId });
  const replay = () => client.getReplayHistory({ tenantId, conversationId, format: 'openai' });

  // The host's own conversation, as it keeps it between turns.
  const question1 = new HumanMessage({ id: 'user-1', content: 'Where are my orders A-1 and B-2?' });
  let answer1: BaseMessage;

  beforeAll(async () => {
    ({ stack, publisher, client } = await startClientStack('langchain', HOUR_LONG_FRESHNESS));
  });

  afterAll(async () => {
    await stopClientStack({ stack, publisher, client });
  });

  it('turn 1: records two rounds (two parallel calls, then one) and the final answer; the replay gives them back', async () => {
    const model = new ScriptedChatModel([
      {
        content: '',
        tool_calls: [call('call_a', 'get_order', { orderId: 'A-1' }), call('call_b', 'get_customer', { id: 7 })],
        usage_metadata: usage(100, 20),
      },
      { content: '', tool_calls: [call('call_c', 'get_order', { orderId: 'B-2' })], usage_metadata: usage(150, 10) },
      { content: 'Both orders have shipped, Ada.', usage_metadata: usage(200, 30) },
    ]);
    const agent = createReactAgent({ llm: model, tools });
    const handler = new ToolHistoryCallbackHandler({ publisher, scope: scope('run-1') });

    const result = await agent.invoke({ messages: [question1] }, { callbacks: [handler] });

    answer1 = result.messages.at(-1)!;
    expect(answer1.content).toBe('Both orders have shipped, Ada.');
    expect(model.boundTools).toEqual(['get_order', 'get_customer', 'charge_card']);
    // invoke() returned once the broker had every event of the run.
    const published = await handler.settled();
    expect(published.map((e) => e.type)).toEqual([
      'ToolCallRequested',
      'ToolCallRequested',
      'ToolResultReceived',
      'ToolResultReceived',
      'ToolCallRequested',
      'ToolResultReceived',
      'RunCompleted',
    ]);

    const history = await waitFor(replay, (h) => h.turns.length === 1 && h.turns[0].status === RunStatus.RUN_STATUS_COMPLETED, {
      what: 'run-1 replayed',
    });
    expect(history.omitted).toEqual([]);
    expect(history.turns.map((t) => [t.runId, t.assistantMessageId])).toEqual([['run-1', answer1.id]]);
    expect(history.messages).toEqual([
      {
        role: 'assistant',
        content: null,
        tool_calls: [
          { id: 'call_a', type: 'function', function: { name: 'get_order', arguments: '{"orderId":"A-1"}' } },
          { id: 'call_b', type: 'function', function: { name: 'get_customer', arguments: '{"id":7}' } },
        ],
      },
      { role: 'tool', tool_call_id: 'call_a', content: 'order A-1: shipped' },
      { role: 'tool', tool_call_id: 'call_b', content: '{"id":7,"name":"Ada"}' },
      {
        role: 'assistant',
        content: null,
        tool_calls: [{ id: 'call_c', type: 'function', function: { name: 'get_order', arguments: '{"orderId":"B-2"}' } }],
      },
      { role: 'tool', tool_call_id: 'call_c', content: 'order B-2: shipped' },
    ]);
  });

  it('turn 2: the agent gets the replayed rounds in its input; a tool that throws is recorded as an error result', async () => {
    const history = await replay();
    const replayed = toLangChainMessages(history.messages);
    const question2 = new HumanMessage({ id: 'user-2', content: 'Then charge my card for B-2.' });
    const input = [question1, ...replayed, answer1, question2];
    // Spliced by the turn's assistant message id, the same conversation (from the structured rounds, with each result's status).
    const spliced = spliceToolHistory([question1, answer1, question2], history);
    expect(shape(spliced, { status: false })).toEqual(shape(input, { status: false }));

    const model = new ScriptedChatModel([
      { content: '', tool_calls: [call('call_pay', 'charge_card', { amount: 12 })], usage_metadata: usage(300, 15) },
      { content: 'Your card was declined.', usage_metadata: usage(320, 12) },
    ]);
    const agent = createReactAgent({ llm: model, tools });
    const handler = new ToolHistoryCallbackHandler({ publisher, scope: scope('run-2') });

    await agent.invoke({ messages: input }, { callbacks: [handler] });
    await handler.settled();

    // What the model got on its first call: the host's messages with turn 1's tool rounds in between, as LangChain messages.
    expect(shape(model.received[0], { status: false })).toEqual([
      { type: 'human', content: 'Where are my orders A-1 and B-2?' },
      {
        type: 'ai',
        toolCalls: [
          { id: 'call_a', name: 'get_order', args: { orderId: 'A-1' } },
          { id: 'call_b', name: 'get_customer', args: { id: 7 } },
        ],
      },
      { type: 'tool', toolCallId: 'call_a', content: 'order A-1: shipped' },
      { type: 'tool', toolCallId: 'call_b', content: '{"id":7,"name":"Ada"}' },
      { type: 'ai', toolCalls: [{ id: 'call_c', name: 'get_order', args: { orderId: 'B-2' } }] },
      { type: 'tool', toolCallId: 'call_c', content: 'order B-2: shipped' },
      { type: 'ai', content: 'Both orders have shipped, Ada.' },
      { type: 'human', content: 'Then charge my card for B-2.' },
    ]);
    // LangGraph told the model the tool failed.
    expect(shape(model.received[1]).at(-1)).toMatchObject({ type: 'tool', toolCallId: 'call_pay', status: 'error' });

    const after = await waitFor(replay, (h) => h.turns.length === 2, { what: 'run-2 replayed' });
    expect(after.turns[1].runId).toBe('run-2');
    expect(after.turns[1].rounds).toEqual([
      expect.objectContaining({
        roundIndex: 0,
        calls: [
          expect.objectContaining({ toolCallId: 'call_pay', toolName: 'charge_card', result: 'Error: card declined', isError: true }),
        ],
      }),
    ]);
    expect(after.turns[1].messages.at(-1)).toEqual({ role: 'tool', tool_call_id: 'call_pay', content: 'Error: card declined' });
    // Converted from the structured rounds, the error keeps its status.
    expect(shape(toLangChainMessages({ turns: [after.turns[1]] })).at(-1)).toMatchObject({ toolCallId: 'call_pay', status: 'error' });
    const errors: string[] = [];
    for await (const invocation of client.listToolInvocations({ tenantId, conversationId, status: 'error' }))
      errors.push(invocation.toolCallId);
    expect(errors).toEqual(['call_pay']);
  });

  it('records the tokens of every model call of the completed runs', async () => {
    const expected = [String(100 + 150 + 200 + 300 + 320), String(20 + 10 + 30 + 15 + 12)];
    const totals = await waitFor(
      () => client.getUsage({ tenantId, from: new Date(Date.now() - 3_600_000), to: new Date(Date.now() + 60_000) }),
      (u) => u.inputTokens === expected[0],
      { what: 'the tokens of run-1 and run-2' },
    );
    expect([totals.inputTokens, totals.outputTokens]).toEqual(expected);
  });

  it('an agent run that fails is recorded as RunFailed: its calls stay for audit, the replay leaves them out', async () => {
    const model = new ScriptedChatModel([
      { content: '', tool_calls: [call('call_f', 'get_order', { orderId: 'C-3' })] },
      Object.assign(new Error('model overloaded'), { lc_error_code: 'MODEL_RATE_LIMIT' }),
    ]);
    const agent = createReactAgent({ llm: model, tools });
    const handler = new ToolHistoryCallbackHandler({ publisher, scope: scope('run-3') });

    await expect(agent.invoke({ messages: [new HumanMessage('And C-3?')] }, { callbacks: [handler] })).rejects.toThrow('model overloaded');
    await handler.settled();

    const history = await waitFor(
      replay,
      (h) => h.omitted.some((o) => o.runId === 'run-3' && o.reason === OmissionReason.OMISSION_REASON_RUN_FAILED),
      { what: 'run-3 omitted as failed' },
    );
    expect(history.omitted.filter((o) => o.runId === 'run-3')).toEqual([
      expect.objectContaining({ toolCallId: 'call_f', toolName: 'get_order', reason: OmissionReason.OMISSION_REASON_RUN_FAILED }),
    ]);
    expect(history.turns.map((t) => t.runId)).toEqual(['run-1', 'run-2']);

    let failed: SubscribedEvent | undefined;
    for await (const recorded of client.subscribe({ tenantId, types: ['RunFailed'] })) {
      failed = recorded;
      break;
    }
    expect(failed?.runId).toBe('run-3');
    expect(failed?.event).toMatchObject({ type: 'RunFailed', error: { code: 'MODEL_RATE_LIMIT', message: 'model overloaded' } });

    const audited: string[] = [];
    for await (const invocation of client.listToolInvocations({ tenantId, runId: 'run-3' }))
      audited.push(`${invocation.toolCallId}:${invocation.result}`);
    expect(audited).toEqual(['call_f:order C-3: shipped']);
  });
});
