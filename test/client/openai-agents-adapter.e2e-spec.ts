import { credentials } from '@grpc/grpc-js';
import { Agent, type AgentInputItem, run, RunState, user } from '@openai/agents';
import { ScriptedModel } from '@openai/agents/testing';
import {
  ApprovalStatus,
  type Invocation,
  InvocationStatus,
  ReasoningOmission,
  ToolEventPublisher,
  ToolHistoryClient,
  type ToolEvent,
} from '../../libs/client/src';
import {
  GetReplayHistoryRequest,
  type GetReplayHistoryResponse,
  ToolHistoryClient as GeneratedClient,
  HistoryFormat,
} from '../../libs/client/src/generated/toolhistory/v1/toolhistory';
import { historyInput, recordedRun, toAgentInputItems } from '../../libs/client/src/openai-agents';
import { ALL_TOOLS, assistantMessage, functionCall, response } from '../../libs/client/src/openai-agents/scripted-agents.fixture';
import { HOUR_LONG_FRESHNESS, startClientStack, stopClientStack } from '../support/client-stack';
import type { RunningStack } from '../support/running-stack';
import { uniqueName } from '../support/test-environment';
import { waitFor } from '../support/wait-for';

const travelAgent = (model: ScriptedModel) => new Agent({ name: 'travel', instructions: 'Help with travel.', model, tools: ALL_TOOLS });

/** What an item of the model's input is, in a word: a message's role, else the item's type and call id. */
const shape = (item: AgentInputItem) =>
  'role' in item ? item.role : `${item.type}:${'callId' in item && typeof item.callId === 'string' ? item.callId : ''}`;

describe('@toolhistory/client/openai-agents: OpenAI Agents SDK runs through the real broker and the real service', () => {
  let stack: RunningStack;
  let publisher: ToolEventPublisher;
  let client: ToolHistoryClient;
  let responsesClient: GeneratedClient;
  const tenantId = uniqueName('tenant');

  beforeAll(async () => {
    ({ stack, publisher, client } = await startClientStack('agents', HOUR_LONG_FRESHNESS));
    responsesClient = new GeneratedClient(stack.address, credentials.createInsecure());
  });

  afterAll(async () => {
    responsesClient?.close();
    await stopClientStack({ stack, publisher, client });
  });

  const target = (conversationId: string, runId: string) => ({ publisher, scope: { tenantId, conversationId, channel: 'web', runId } });

  /** The replay in the OpenAI Responses format, as GetReplayHistory answers it (ToolHistoryClient does not name that format). */
  const responsesReplay = (conversationId: string) =>
    new Promise<GetReplayHistoryResponse>((resolve, reject) =>
      responsesClient.getReplayHistory(
        GetReplayHistoryRequest.fromPartial({ tenantId, conversationId, format: HistoryFormat.HISTORY_FORMAT_OPENAI_RESPONSES }),
        (error, answer) => (error ? reject(error) : resolve(answer)),
      ),
    );

  const responsesReplayUntil = (conversationId: string, done: (replay: GetReplayHistoryResponse) => boolean, what: string) =>
    waitFor(() => responsesReplay(conversationId), done, { what });

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

  async function invocationsOf(conversationId: string, count: number): Promise<Invocation[]> {
    return waitFor(
      async () => {
        const found: Invocation[] = [];
        for await (const invocation of client.listToolInvocations({ tenantId, conversationId })) found.push(invocation);
        return found.sort((a, b) => a.roundIndex - b.roundIndex || a.sequenceIndex - b.sequenceIndex);
      },
      (found) => found.length === count && found.every((i) => i.status !== InvocationStatus.INVOCATION_STATUS_PENDING),
      { what: `${count} answered invocations in ${conversationId}` },
    );
  }

  it('records parallel calls and a failing tool, and the next turn’s run() gets the replayed calls and outputs as input', async () => {
    const conversationId = uniqueName('conv');
    const model = new ScriptedModel([
      response(
        [
          functionCall('get_weather', { city: 'Paris' }, { callId: 'call_paris' }),
          functionCall('get_weather', { city: 'Berlin' }, { callId: 'call_berlin' }),
          functionCall('search_flights', { to: 'Oslo' }, { callId: 'call_flights' }),
        ],
        [50, 20],
      ),
      response([functionCall('suggest_packing', { tempsC: [18, 12] }, { callId: 'call_pack' })], [90, 15]),
      response(
        [assistantMessage('Paris 18°C, Berlin 12°C, both rainy; no flights to Oslo. Take an umbrella.', { id: 'msg_a1' })],
        [130, 25],
      ),
      // Turn 2.
      response([assistantMessage('Paris was 18°C.', { id: 'msg_a2' })], [200, 8]),
    ]);
    const agent = travelAgent(model);

    // Turn 1. The host keeps its messages, with ids; the tool calls are the service's to keep.
    const user1: AgentInputItem = { ...user('Weather in Paris and Berlin, flights to Oslo, and what should I pack?'), id: 'msg_u1' };
    const turn1 = await recordedRun(target(conversationId, 'turn-1'), [user1], (input) => run(agent, input));
    const hostItems: AgentInputItem[] = [user1, ...turn1.output.filter((item) => 'role' in item && item.role === 'assistant')];
    expect(hostItems.map((item) => item.id)).toEqual(['msg_u1', 'msg_a1']);

    const recorded = await eventsOfRun('turn-1');
    expect(
      recorded.map((e) => [
        e.type,
        'roundIndex' in e ? e.roundIndex : '',
        'sequenceIndex' in e ? e.sequenceIndex : '',
        'toolCallId' in e ? e.toolCallId : '',
      ]),
    ).toEqual([
      ['ToolCallRequested', 0, 0, 'call_paris'],
      ['ToolCallRequested', 0, 1, 'call_berlin'],
      ['ToolCallRequested', 0, 2, 'call_flights'],
      ['ToolResultReceived', 0, 0, 'call_paris'],
      ['ToolResultReceived', 0, 1, 'call_berlin'],
      ['ToolResultReceived', 0, 2, 'call_flights'],
      ['ToolCallRequested', 1, 0, 'call_pack'],
      ['ToolResultReceived', 1, 0, 'call_pack'],
      ['RunCompleted', '', '', ''],
    ]);
    expect(recorded[3]).toMatchObject({ result: { city: 'Paris', tempC: 18, sky: 'rain' }, isError: false });
    expect(recorded[5]).toMatchObject({ result: 'An error occurred while running the tool. Please try again.', isError: true });
    expect(recorded.at(-1)).toMatchObject({
      finishReason: 'stop',
      // The id the model gave its final message: the host's item of that id.
      assistantMessageId: 'msg_a1',
      usage: [
        { inputTokens: 50, outputTokens: 20, model: 'gpt-test-1' },
        { inputTokens: 90, outputTokens: 15, model: 'gpt-test-1' },
        { inputTokens: 130, outputTokens: 25, model: 'gpt-test-1' },
      ],
    });

    // Turn 2: the replay in the Responses format, turned into the SDK's items among the host's, then the new question.
    const replay = await responsesReplayUntil(
      conversationId,
      (r) => r.turns.some((t) => t.assistantMessageId === 'msg_a1'),
      'turn 1 replayed',
    );
    expect(replay.omitted).toEqual([]);
    const input = [...historyInput(replay, hostItems), user('And how warm was Paris?')];
    const turn2 = await recordedRun(target(conversationId, 'turn-2'), input, (items) => run(agent, items));
    expect(turn2.finalOutput).toBe('Paris was 18°C.');

    // What the model received, as the SDK sent it.
    const sent = model.calls[3].request.input as AgentInputItem[];
    expect(sent.map(shape)).toEqual([
      'user',
      'function_call:call_paris',
      'function_call:call_berlin',
      'function_call:call_flights',
      'function_call_result:call_paris',
      'function_call_result:call_berlin',
      'function_call_result:call_flights',
      'function_call:call_pack',
      'function_call_result:call_pack',
      'assistant',
      'user',
    ]);
    expect(sent[1]).toMatchObject({ type: 'function_call', name: 'get_weather', arguments: '{"city":"Paris"}' });
    expect(sent[1]).not.toHaveProperty('id');
    expect(sent[4]).toMatchObject({ name: 'get_weather', output: { type: 'text', text: '{"city":"Paris","tempC":18,"sky":"rain"}' } });
    // The failed call: the SDK's text, marked as an error.
    expect(sent[6]).toMatchObject({
      name: 'search_flights',
      output: { type: 'text', text: '[error] An error occurred while running the tool. Please try again.' },
    });
    expect(sent[8]).toMatchObject({ name: 'suggest_packing', output: { type: 'text', text: 'umbrella and a scarf for [18,12]' } });
    expect(sent[9]).toMatchObject({ role: 'assistant', id: 'msg_a1' });

    // Turn 2 asked for no tool: a completed run without rounds.
    expect(await eventsOfRun('turn-2')).toEqual([
      expect.objectContaining({
        type: 'RunCompleted',
        finishReason: 'stop',
        assistantMessageId: 'msg_a2',
        usage: [expect.objectContaining({ inputTokens: 200 })],
      }),
    ]);
  });

  it("records a reasoning model's encrypted reasoning with its round, and the run that goes on sends it back before the round's call", async () => {
    const conversationId = uniqueName('conv');
    const reasoning = {
      type: 'reasoning' as const,
      id: 'rs_68a1f0c2d4e81',
      content: [{ type: 'input_text' as const, text: 'Paris first; the weather decides what to pack.' }],
      providerData: { id: 'rs_68a1f0c2d4e81', type: 'reasoning', encrypted_content: 'gAAAAABoofDCq1x0Zk2' },
    };
    const model = new ScriptedModel([
      response(
        [
          reasoning,
          assistantMessage('I will check the weather in Paris first.'),
          functionCall('get_weather', { city: 'Paris' }, { callId: 'call_paris', id: 'fc_68a1f0c2d4e90' }),
        ],
        [50, 40],
      ),
      response([functionCall('suggest_packing', { tempsC: [18] }, { callId: 'call_pack', id: 'fc_68a1f0c2d4e91' })], [90, 10]),
      // Run 2.
      response([assistantMessage('Paris is 18°C and rainy: take an umbrella.', { id: 'msg_answer' })], [120, 12]),
    ]);
    // The run stops right after the packing advice (no answer of the model's): the turn goes on.
    const agent = new Agent({
      name: 'travel',
      instructions: 'Help with travel.',
      model,
      tools: ALL_TOOLS,
      toolUseBehavior: { stopAtToolNames: ['suggest_packing'] },
    });
    const question: AgentInputItem = { ...user('What should I pack for Paris?'), id: 'msg_u1' };
    await recordedRun(target(conversationId, 'run-1'), [question], (input) => run(agent, input), { userMessageId: 'msg_u1' });
    const events = await eventsOfRun('run-1');
    expect(events.map((e) => e.type)).toEqual([
      'ModelResponseReceived',
      'ToolCallRequested',
      'ToolResultReceived',
      'ModelResponseReceived',
      'ToolCallRequested',
      'ToolResultReceived',
      'RunCompleted',
    ]);
    expect(events[0]).toMatchObject({
      roundIndex: 0,
      provider: 'openai',
      model: 'gpt-test-1',
      text: 'I will check the weather in Paris first.',
    });
    expect(events.at(-1)).toMatchObject({ finishReason: 'tool_limit' });

    // Run 2 goes on from the replay (for the model it calls): the round whose output reached the model, with its reasoning.
    const history = await waitFor(
      () => client.getReplayHistory({ tenantId, conversationId, format: 'openai-responses', model: 'gpt-test-1' }),
      (h) => h.turns.some((t) => t.rounds.some((r) => r.reasoningJson !== '')),
      { what: "run 1's round replayed with its reasoning" },
    );
    await recordedRun(target(conversationId, 'run-2'), [question, ...toAgentInputItems(history)], (input) => run(agent, input), {
      userMessageId: 'msg_u1',
    });

    // What the model received in run 2, as the SDK sent it: the reasoning item as the model produced it, right before the call it preceded.
    const sent = model.calls[2].request.input as AgentInputItem[];
    expect(sent.map(shape)).toEqual(['user', 'reasoning:', 'assistant', 'function_call:call_paris', 'function_call_result:call_paris']);
    expect(sent[1]).toEqual({
      type: 'reasoning',
      id: reasoning.id,
      content: [{ type: 'input_text', text: reasoning.content[0].text }],
      providerData: { encrypted_content: reasoning.providerData.encrypted_content },
    });
    expect(sent[3]).toMatchObject({ id: 'fc_68a1f0c2d4e90', callId: 'call_paris' });

    // To another model, the round goes back without its reasoning (nor its item id), and the round says why.
    const other = await client.getReplayHistory({ tenantId, conversationId, format: 'openai-responses', model: 'gpt-5-mini' });
    const round = other.turns.flatMap((t) => t.rounds).find((r) => r.calls.some((c) => c.toolCallId === 'call_paris'));
    expect(round).toMatchObject({ reasoningJson: '', reasoningOmitted: ReasoningOmission.REASONING_OMISSION_OTHER_MODEL });
    expect(toAgentInputItems(other.messages).map((item) => item.type)).not.toContain('reasoning');
  });

  it('records RunFailed when the SDK refuses a tool call without an id, and replays nothing of the run', async () => {
    const conversationId = uniqueName('conv');
    const model = new ScriptedModel([response([functionCall('get_weather', { city: 'Paris' }, { callId: '' })], [40, 10])]);
    await expect(
      recordedRun(target(conversationId, 'no-id'), 'Weather in Paris?', (input) => run(travelAgent(model), input)),
    ).rejects.toThrow('Tool invocation is missing a non-empty call ID.');
    expect(await eventsOfRun('no-id')).toEqual([
      expect.objectContaining({
        type: 'RunFailed',
        error: { code: 'ModelBehaviorError', message: 'Tool invocation is missing a non-empty call ID.' },
      }),
    ]);
    const replay = await responsesReplay(conversationId);
    expect(toAgentInputItems(replay)).toEqual([]);
    expect(replay.omitted).toEqual([]);
  });

  describe('a tool that needs approval (needsApproval), answered when the host resumes the run’s state', () => {
    /** The weather and a refund in one response; the refund waits for a person. */
    const askingModel = () =>
      new ScriptedModel([
        response(
          [
            functionCall('get_weather', { city: 'Paris' }, { callId: 'call_w' }),
            functionCall('refund', { orderId: 'A-1', amountEur: 120 }, { callId: 'call_refund' }),
          ],
          [30, 6],
        ),
      ]);
    const approvalReason = () => 'refunds need a person';

    /** The run that asks: it stops for the approval, and the host keeps the state as a string. */
    async function askForRefund(conversationId: string, runId: string): Promise<string> {
      const asked = await recordedRun(
        target(conversationId, runId),
        'Refund order A-1, it rained all week',
        (input) => run(travelAgent(askingModel()), input),
        {
          approvalReason,
        },
      );
      expect(asked.interruptions.map((item) => item.rawItem)).toEqual([expect.objectContaining({ callId: 'call_refund' })]);
      return asked.state.toString();
    }

    it('records the request in the run that asked, and the approval and the result in the run that resumed, with the ids of the call', async () => {
      const conversationId = uniqueName('conv');
      const kept = await askForRefund(conversationId, 'run-ask');
      const asked = await eventsOfRun('run-ask');
      expect(asked.map((e) => [e.type, 'toolCallId' in e ? e.toolCallId : ''])).toEqual([
        ['ToolCallRequested', 'call_w'],
        ['ToolCallRequested', 'call_refund'],
        ['ToolResultReceived', 'call_w'],
        ['ToolApprovalRequested', 'call_refund'],
        ['RunCompleted', ''],
      ]);
      expect(asked[3]).toMatchObject({ roundIndex: 0, sequenceIndex: 1, reason: 'refunds need a person' });
      expect(asked[4]).toMatchObject({ finishReason: 'tool_limit' });
      const waiting = await waitFor(
        () => client.getReplayHistory({ tenantId, conversationId, format: 'openai' }),
        (h) => h.pendingApprovals.length === 1,
        { what: 'the refund listed as waiting' },
      );
      expect(waiting.pendingApprovals[0]).toMatchObject({ toolCallId: 'call_refund', runId: 'run-ask', roundIndex: 0, sequenceIndex: 1 });

      // Later, in another request: the state restored, the person approves, the run resumes as a run of its own.
      const resumeModel = new ScriptedModel([response([assistantMessage('Refunded 120 EUR.', { id: 'msg_refunded' })], [60, 5])]);
      const agent = travelAgent(resumeModel);
      const state = await RunState.fromString(agent, kept);
      state.approve(state.getInterruptions()[0]);
      await recordedRun(target(conversationId, 'run-resume'), state, (input) => run(agent, input), { decidedBy: 'desk-3' });
      expect(JSON.stringify(resumeModel.calls[0].request.input)).toContain('refunded 120 EUR on A-1');

      expect(await eventsOfRun('run-resume')).toEqual([
        expect.objectContaining({
          type: 'ToolApprovalDecided',
          toolCallId: 'call_refund',
          roundIndex: 0,
          sequenceIndex: 1,
          approved: true,
          decidedBy: 'desk-3',
        }),
        expect.objectContaining({
          type: 'ToolResultReceived',
          toolCallId: 'call_refund',
          roundIndex: 0,
          sequenceIndex: 1,
          result: 'refunded 120 EUR on A-1',
          isError: false,
        }),
        expect.objectContaining({
          type: 'RunCompleted',
          finishReason: 'stop',
          assistantMessageId: 'msg_refunded',
          usage: [expect.objectContaining({ inputTokens: 60, outputTokens: 5 })],
        }),
      ]);
      const invocations = await invocationsOf(conversationId, 2);
      expect(invocations.map((i) => [i.toolCallId, i.runId, i.status, i.approval, i.resultRunId])).toEqual([
        ['call_w', 'run-ask', InvocationStatus.INVOCATION_STATUS_SUCCEEDED, ApprovalStatus.APPROVAL_STATUS_NONE, ''],
        ['call_refund', 'run-ask', InvocationStatus.INVOCATION_STATUS_SUCCEEDED, ApprovalStatus.APPROVAL_STATUS_APPROVED, 'run-resume'],
      ]);

      // The next turn gets both calls back, answered, as the model saw them.
      const replay = await responsesReplayUntil(
        conversationId,
        (r) => r.pendingApprovals.length === 0 && r.turns.some((t) => t.runId === 'run-resume'),
        'the resumed run replayed',
      );
      // A host that keeps no messages of its own takes every turn's items as they come: the refund in the turn of the run that answered it.
      expect(replay.turns.map((t) => t.runId)).toEqual(['run-ask', 'run-resume']);
      const items = toAgentInputItems(replay);
      expect(items.map(shape)).toEqual([
        'function_call:call_w',
        'function_call_result:call_w',
        'function_call:call_refund',
        'function_call_result:call_refund',
      ]);
      expect(items[3]).toMatchObject({ name: 'refund', output: { type: 'text', text: 'refunded 120 EUR on A-1' } });
    });

    it('records a rejection with its message and no result; the replay tells the model the call was denied', async () => {
      const conversationId = uniqueName('conv');
      const kept = await askForRefund(conversationId, 'run-ask-2');
      const resumeModel = new ScriptedModel([response([assistantMessage('I could not refund it.', { id: 'msg_no' })], [60, 5])]);
      const agent = travelAgent(resumeModel);
      const state = await RunState.fromString(agent, kept);
      state.reject(state.getInterruptions()[0], { message: 'Refunds over 100 EUR need a manager.' });
      await recordedRun(target(conversationId, 'run-deny'), state, (input) => run(agent, input), { decidedBy: 'desk-3' });

      expect(await eventsOfRun('run-deny')).toEqual([
        expect.objectContaining({
          type: 'ToolApprovalDecided',
          toolCallId: 'call_refund',
          approved: false,
          reason: 'Refunds over 100 EUR need a manager.',
        }),
        expect.objectContaining({ type: 'RunCompleted', finishReason: 'stop', assistantMessageId: 'msg_no' }),
      ]);
      const replay = await responsesReplayUntil(
        conversationId,
        (r) => r.pendingApprovals.length === 0 && r.turns.some((t) => t.runId === 'run-deny'),
        'the denied call replayed',
      );
      expect(replay.omitted).toEqual([]);
      const denial = toAgentInputItems(replay).find((item) => item.type === 'function_call_result' && item.callId === 'call_refund');
      expect(denial).toMatchObject({
        output: {
          type: 'text',
          text: '[denied] A person did not approve this refund call, so it did not run. Reason: Refunds over 100 EUR need a manager.',
        },
      });
    });
  });
});
