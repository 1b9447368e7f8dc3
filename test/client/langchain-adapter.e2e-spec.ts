import { AIMessage, type BaseMessage, HumanMessage, ToolMessage } from '@langchain/core/messages';
import { tool } from '@langchain/core/tools';
import { Command, interrupt, MemorySaver } from '@langchain/langgraph';
// The repo's moduleResolution ("node") does not read package exports: the types come from the file the export names.
import type * as Prebuilt from '@langchain/langgraph/dist/prebuilt/index.js';
import {
  ApprovalStatus,
  InvocationStatus,
  OmissionReason,
  RunStatus,
  type SubscribedEvent,
  type ToolEvent,
  ToolEventPublisher,
  ToolHistoryClient,
} from '../../libs/client/src';
import { spliceToolHistory, toLangChainMessages, ToolHistoryCallbackHandler } from '../../libs/client/src/langchain';
import { call, getOrder, ScriptedChatModel, tools, usage } from '../../libs/client/src/langchain/scripted-chat-model.fixture';
import { HOUR_LONG_FRESHNESS, startClientStack, stopClientStack } from '../support/client-stack';
import type { RunningStack } from '../support/running-stack';
import { uniqueName } from '../support/test-environment';
import { waitFor } from '../support/wait-for';
import { z } from 'zod';

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
    // Channel `research` keeps a round's reasoning after its turn, so the next turn's replay carries it.
    // transfer_funds has side effects: a call of it left without a result is replayed as interrupted.
    const policy = {
      ...HOUR_LONG_FRESHNESS.policy,
      tools: { transfer_funds: { sideEffects: true } },
      channels: { research: { reasoning: { keep: 'always' } } },
    };
    ({ stack, publisher, client } = await startClientStack('langchain', { policy }));
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
  it("records a Claude-style round's thinking with its text; the replay gives the next run its thinking first in that round's message", async () => {
    const thoughtful = uniqueName('conv');
    const at = (runId: string) => ({ tenantId, conversationId: thoughtful, channel: 'research', runId });
    const thinking = { type: 'thinking', thinking: 'A-1 first; then tell Ada.', signature: 'EqQBCkgIARABGAIiQHx0' };
    const redacted = { type: 'redacted_thinking', data: 'EmwKAhgBEgy3va3pzix' };
    const model = new ScriptedChatModel([
      {
        content: [thinking, redacted, { type: 'text', text: 'Let me look A-1 up.' }],
        tool_calls: [call('call_t', 'get_order', { orderId: 'A-1' })],
        usage_metadata: usage(100, 40),
        response_metadata: { model_name: 'claude-sonnet-4-5' },
      },
      { content: 'A-1 has shipped.', usage_metadata: usage(150, 10) },
      // Run 2.
      { content: 'Yes, shipped.', usage_metadata: usage(200, 5) },
    ]);
    const agent = createReactAgent({ llm: model, tools });
    const question = new HumanMessage({ id: 'user-t1', content: 'Where is A-1?' });
    const handler = new ToolHistoryCallbackHandler({ publisher, scope: at('run-t1') });
    const answer = (await agent.invoke({ messages: [question] }, { callbacks: [handler] })).messages.at(-1)!;
    expect((await handler.settled()).map((e) => e.type)).toEqual([
      'ModelResponseReceived',
      'ToolCallRequested',
      'ToolResultReceived',
      'RunCompleted',
    ]);

    const history = await waitFor(
      () => client.getReplayHistory({ tenantId, conversationId: thoughtful, format: 'anthropic', model: 'claude-sonnet-4-5' }),
      (h) => h.turns.some((t) => t.rounds.some((r) => r.reasoningJson !== '')),
      { what: "run-t1's round replayed with its reasoning" },
    );
    const question2 = new HumanMessage({ id: 'user-t2', content: 'Shipped, really?' });
    const input = spliceToolHistory([question, answer, question2], history);
    await agent.invoke({ messages: input }, { callbacks: [new ToolHistoryCallbackHandler({ publisher, scope: at('run-t2') })] });

    // What the model received in run 2: the round's message with its thinking blocks first, as the model produced them, then its text.
    const round = model.received[2].find((m) => AIMessage.isInstance(m) && (m.tool_calls?.length ?? 0) > 0) as AIMessage;
    expect(JSON.stringify(round.content)).toBe(JSON.stringify([thinking, redacted, { type: 'text', text: 'Let me look A-1 up.' }]));
    expect(round.tool_calls?.map((c) => c.id)).toEqual(['call_t']);
  });

  it('a run the host aborts in a side-effect tool fails aborted; the replay shows the call as interrupted, not failed', async () => {
    const aborted = uniqueName('conv-aborted');
    let transferring!: () => void;
    const started = new Promise<void>((resolve) => (transferring = resolve));
    const transferFunds = tool(
      async () => {
        transferring();
        return new Promise<string>(() => undefined);
      },
      { name: 'transfer_funds', description: 'Transfers funds (and waits on the bank).', schema: z.object({ amount: z.number() }) },
    );
    const model = new ScriptedChatModel([{ content: '', tool_calls: [call('call_transfer', 'transfer_funds', { amount: 5 })] }]);
    const agent = createReactAgent({ llm: model, tools: [transferFunds] });
    const handler = new ToolHistoryCallbackHandler({
      publisher,
      scope: { tenantId, conversationId: aborted, channel: 'support', runId: 'run-aborted' },
    });
    const controller = new AbortController();

    const turn = agent.invoke({ messages: [new HumanMessage('Send 5 EUR')] }, { callbacks: [handler], signal: controller.signal });
    await started;
    controller.abort();
    await expect(turn).rejects.toThrow(/abort/i);
    expect((await handler.settled()).map((e) => e.type)).toEqual(['ToolCallRequested', 'RunFailed']);

    const history = await waitFor(
      () => client.getReplayHistory({ tenantId, conversationId: aborted, format: 'openai' }),
      (h) => h.turns.length === 1,
      { what: 'the aborted run replayed' },
    );
    expect(shape(toLangChainMessages(history))).toEqual([
      { type: 'ai', toolCalls: [{ id: 'call_transfer', name: 'transfer_funds', args: { amount: 5 } }] },
      {
        type: 'tool',
        toolCallId: 'call_transfer',
        content:
          '[interrupted] This call was interrupted before its result was recorded: it may or may not have taken effect. Check before calling it again.',
        status: 'error',
      },
    ]);
  });

  describe('a tool that asks a person first (interrupt() inside the tool)', () => {
    const approvals = { tenantId: uniqueName('tenant'), conversationId: uniqueName('conv'), channel: 'support' };
    const scopeOf = (runId: string) => ({ ...approvals, runId });
    const refund = tool(
      async ({ orderId, amount }: { orderId: string; amount: number }) => {
        const answer = interrupt({ reason: `Refund ${amount} EUR for ${orderId}?` }) as { approved?: boolean };
        return answer.approved === true ? `refunded ${amount} EUR for ${orderId}` : 'refund declined';
      },
      {
        name: 'refund',
        description: 'Refunds an order, once a person approves.',
        schema: z.object({ orderId: z.string(), amount: z.number() }),
      },
    );
    // Round 0 looks the order up, round 1 asks to refund it; after the answer, the model answers.
    const model = new ScriptedChatModel([
      { content: '', tool_calls: [call('call_look', 'get_order', { orderId: 'A-1' })], usage_metadata: usage(40, 5) },
      { content: '', tool_calls: [call('call_refund', 'refund', { orderId: 'A-1', amount: 20 })], usage_metadata: usage(60, 7) },
      { content: 'Refunded 20 EUR.', usage_metadata: usage(90, 6) },
    ]);
    // A durable checkpointer in production: the graph is resumed by a later request, with a handler of its own.
    const agent = createReactAgent({ llm: model, tools: [getOrder, refund], checkpointer: new MemorySaver() });
    const thread = { configurable: { thread_id: approvals.conversationId } };
    const replay = () =>
      client.getReplayHistory({ tenantId: approvals.tenantId, conversationId: approvals.conversationId, format: 'openai' });

    /** Every recorded event of the run, in order, up to its end, as the service's subscription delivers them. */
    async function eventsOfRun(runId: string): Promise<ToolEvent[]> {
      const events: ToolEvent[] = [];
      for await (const recorded of client.subscribe({ tenantId: approvals.tenantId, signal: AbortSignal.timeout(30_000) })) {
        if (recorded.runId !== runId) continue;
        events.push(recorded.event);
        if (recorded.event.type === 'RunCompleted' || recorded.event.type === 'RunFailed') return events;
      }
      throw new Error(`${runId} did not end within 30 s`);
    }

    it('records the interrupt as an approval request for the call, not as an error or a failed run', async () => {
      const handler = new ToolHistoryCallbackHandler({ publisher, scope: scopeOf('run-ask') }, { interruptEndsRun: true });

      const paused = await agent.invoke(
        { messages: [new HumanMessage({ id: 'user-refund', content: 'Refund A-1, please' })] },
        { ...thread, callbacks: [handler] },
      );

      // LangGraph's result names the pause (a field its state type does not declare).
      expect((paused as { __interrupt__?: unknown }).__interrupt__).toEqual([
        expect.objectContaining({ value: { reason: 'Refund 20 EUR for A-1?' } }),
      ]);
      await handler.settled();
      const asked = await eventsOfRun('run-ask');
      expect(asked.map((e) => [e.type, 'toolCallId' in e ? e.toolCallId : undefined])).toEqual([
        ['ToolCallRequested', 'call_look'],
        ['ToolResultReceived', 'call_look'],
        ['ToolCallRequested', 'call_refund'],
        ['ToolApprovalRequested', 'call_refund'],
        ['RunCompleted', undefined],
      ]);
      expect(asked[3]).toMatchObject({ roundIndex: 1, sequenceIndex: 0, reason: 'Refund 20 EUR for A-1?' });
      expect(asked[4]).toMatchObject({ finishReason: 'tool_limit' });
      // The user's message id from the agent's input, on every event of the run.
      expect(asked.map((e) => e.userMessageId)).toEqual(Array(asked.length).fill('user-refund'));
    });

    it('lists the call in pendingApprovals while it waits', async () => {
      const history = await waitFor(replay, (h) => h.pendingApprovals.length === 1, { what: 'the refund awaiting approval' });
      expect(history.pendingApprovals).toEqual([
        expect.objectContaining({
          toolCallId: 'call_refund',
          toolName: 'refund',
          runId: 'run-ask',
          reason: 'Refund 20 EUR for A-1?',
          roundIndex: 1,
          sequenceIndex: 0,
        }),
      ]);
      expect(history.omitted).toContainEqual(
        expect.objectContaining({ toolCallId: 'call_refund', reason: OmissionReason.OMISSION_REASON_AWAITING_APPROVAL }),
      );
    });

    it("records, in the run that resumes, the decision the resume value gives and the tool's result, with the ids of the call", async () => {
      const handler = new ToolHistoryCallbackHandler({ publisher, scope: scopeOf('run-resume') });

      const result = await agent.invoke(new Command({ resume: { approved: true, reason: 'loyal customer', decidedBy: 'grace' } }), {
        ...thread,
        callbacks: [handler],
      });

      expect(result.messages.at(-1)!.content).toBe('Refunded 20 EUR.');
      await handler.settled();
      expect(await eventsOfRun('run-resume')).toEqual([
        expect.objectContaining({
          type: 'ToolApprovalDecided',
          toolCallId: 'call_refund',
          roundIndex: 1,
          sequenceIndex: 0,
          approved: true,
          reason: 'loyal customer',
          decidedBy: 'grace',
        }),
        expect.objectContaining({
          type: 'ToolResultReceived',
          toolCallId: 'call_refund',
          roundIndex: 1,
          sequenceIndex: 0,
          result: 'refunded 20 EUR for A-1',
          isError: false,
        }),
        expect.objectContaining({ type: 'RunCompleted', finishReason: 'stop' }),
      ]);
    });

    it("lists the call as approved with the resumed run's result, and replays it in that run", async () => {
      const invocations = await waitFor(
        async () => {
          const found = [];
          for await (const invocation of client.listToolInvocations({
            tenantId: approvals.tenantId,
            conversationId: approvals.conversationId,
          }))
            found.push(invocation);
          return found;
        },
        (found) => found.some((i) => i.toolCallId === 'call_refund' && i.status !== InvocationStatus.INVOCATION_STATUS_PENDING),
        { what: 'the refund answered' },
      );
      expect(invocations.find((i) => i.toolCallId === 'call_refund')).toMatchObject({
        runId: 'run-ask',
        resultRunId: 'run-resume',
        status: InvocationStatus.INVOCATION_STATUS_SUCCEEDED,
        result: 'refunded 20 EUR for A-1',
        approval: ApprovalStatus.APPROVAL_STATUS_APPROVED,
        approvalDecidedBy: 'grace',
      });
      const history = await waitFor(replay, (h) => h.turns.some((t) => t.runId === 'run-resume'), { what: 'the resumed run replayed' });
      expect(history.pendingApprovals).toEqual([]);
      expect(history.turns.find((t) => t.runId === 'run-resume')!.messages).toEqual([
        {
          role: 'assistant',
          content: null,
          tool_calls: [{ id: 'call_refund', type: 'function', function: { name: 'refund', arguments: '{"orderId":"A-1","amount":20}' } }],
        },
        { role: 'tool', tool_call_id: 'call_refund', content: 'refunded 20 EUR for A-1' },
      ]);
    });
  });
});
