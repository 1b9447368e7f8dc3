import { Agent, type AgentInputItem, MemorySession, run, type Session, tool } from '@openai/agents';
import { ScriptedModel, type ScriptedModelResponse } from '@openai/agents/testing';
import fc from 'fast-check';
import type { ToolEventPublisher, ToolHistoryClient } from '../../libs/client/src';
import { DEFAULT_TOOL_ERROR_TEXT, ToolHistorySession } from '../../libs/client/src/openai-agents';
import { ALL_TOOLS, assistantMessage, functionCall } from '../../libs/client/src/openai-agents/scripted-agents.fixture';
import { HOUR_LONG_FRESHNESS, startClientStack, stopClientStack } from '../support/client-stack';
import type { RunningStack } from '../support/running-stack';
import { uniqueName } from '../support/test-environment';

const agentOf = (model: ScriptedModel) => new Agent({ name: 'travel', instructions: 'Help with travel.', model, tools: ALL_TOOLS });

/**
 * Items as compared: a function call without its provider item id and
 * status (the replay gives a call its item id only beside the reasoning item
 * it follows; without reasoning the API takes the call without one); an
 * assistant message as its text (the text a model said beside its calls
 * comes back as an input message, not as the output item, its id and
 * status, the API gave).
 */
const comparable = (items: readonly unknown[]) =>
  items.map((item) => {
    const entry = item as Record<string, unknown>;
    if (entry.role === 'assistant' && (entry.type === undefined || entry.type === 'message')) {
      const content = entry.content;
      const parts = Array.isArray(content) ? (content as Array<{ text?: unknown }>) : [{ text: content }];
      return { role: 'assistant', text: parts.map((part) => (typeof part.text === 'string' ? part.text : '')).join('') };
    }
    if (entry.type !== 'function_call') return item;
    const { id: _id, status: _status, providerData: _providerData, ...rest } = entry;
    return rest;
  });

const inputOf = (model: ScriptedModel, at: number) => {
  const input = model.calls[at].request.input;
  return typeof input === 'string' ? [input] : comparable(input);
};

type Turn = [question: string, steps: ScriptedModelResponse[]];

/** Runs each turn on `session`; what the model was given, per model call. */
async function turnInputs(session: Session, turns: readonly Turn[]): Promise<unknown[][]> {
  const seen: unknown[][] = [];
  for (const [question, steps] of turns) {
    const model = new ScriptedModel(structuredClone(steps));
    await run(agentOf(model), question, { session });
    seen.push(...model.calls.map((_, at) => inputOf(model, at)));
  }
  return seen;
}

describe('@toolhistory/client/openai-agents ToolHistorySession: the SDK’s Session with the calls kept by toolhistory, against the real service', () => {
  let stack: RunningStack;
  let publisher: ToolEventPublisher;
  let client: ToolHistoryClient;
  const tenantId = uniqueName('tenant');

  beforeAll(async () => {
    ({ stack, publisher, client } = await startClientStack('agentsession', {
      policy: {
        ...HOUR_LONG_FRESHNESS.policy,
        // A crashed run's rounds whose results reached a later model call replay (the crash-resume test).
        channels: { 'long-runs': { visibility: 'per_service_call' } },
      },
    }));
  });

  afterAll(async () => {
    await stopClientStack({ stack, publisher, client });
  });

  const decorated = (
    inner: Session = new MemorySession({ sessionId: uniqueName('conv') }),
    model?: string,
    options: Partial<ConstructorParameters<typeof ToolHistorySession>[1]> = {},
  ) =>
    new ToolHistorySession(inner, { publisher, client, tenantId, channel: 'web', ...(model === undefined ? {} : { model }), ...options });

  it('gives the second turn the first turn’s parallel calls and failure, as the plain MemorySession does', async () => {
    const [paris, berlin, flights] = [uniqueName('call_paris'), uniqueName('call_berlin'), uniqueName('call_flights')];
    const turns: Turn[] = [
      [
        'Weather in Paris and Berlin, and flights to Oslo?',
        [
          [
            functionCall('get_weather', { city: 'Paris' }, { callId: paris }),
            functionCall('get_weather', { city: 'Berlin' }, { callId: berlin }),
            functionCall('search_flights', { to: 'Oslo' }, { callId: flights }),
          ],
          [assistantMessage('Rain in both; no flights.', { id: 'msg_a1' })],
        ],
      ],
      ['And tomorrow?', [[assistantMessage('Still rain.', { id: 'msg_a2' })]]],
    ];
    const session = decorated();
    const plain = await turnInputs(new MemorySession(), turns);
    const withToolHistory = await turnInputs(session, turns);

    expect(withToolHistory).toEqual(plain);
    const secondTurn = withToolHistory[2] as Array<Record<string, unknown>>;
    expect(secondTurn.filter((item) => item.type === 'function_call').map((item) => item.callId)).toEqual([paris, berlin, flights]);
    const failed = secondTurn.find((item) => item.type === 'function_call_result' && item.callId === flights);
    expect(failed?.output).toEqual({ type: 'text', text: DEFAULT_TOOL_ERROR_TEXT });
    // The calls are toolhistory's: the inner session holds the messages only.
    expect((await session.inner.getItems()).map((item) => ('role' in item ? item.role : item.type))).toEqual([
      'user',
      'assistant',
      'user',
      'assistant',
    ]);
  });

  it.each([
    ['the same session object', true],
    ['another session object over the same store', false],
  ])('records an approval paused and resumed through RunState (by %s), and the next turn sees the call', async (_by, oneObject) => {
    const inner = new MemorySession({ sessionId: uniqueName('conv') });
    const shared = decorated(inner);
    const sessionOf = (store: Session) => (oneObject ? shared : decorated(store));
    const refundCall = uniqueName('call_refund');
    const model = new ScriptedModel([
      [functionCall('refund', { orderId: 'A-1', amountEur: 30 }, { callId: refundCall })],
      [assistantMessage('Refunded.', { id: 'msg_refunded' })],
      [assistantMessage('You were refunded earlier.', { id: 'msg_later' })],
    ]);
    const agent = agentOf(model);
    const paused = await run(agent, 'Refund 30 EUR on A-1.', { session: sessionOf(inner) });
    const [approval] = paused.interruptions;
    const waiting = await client.getReplayHistory({ tenantId, conversationId: await inner.getSessionId(), format: 'openai-responses' });
    expect(waiting.pendingApprovals.map((p) => p.toolCallId)).toEqual([refundCall]);

    paused.state.approve(approval);
    const resumed = await run(agent, paused.state, { session: sessionOf(inner) });
    expect(resumed.finalOutput).toBe('Refunded.');

    await run(agent, 'Anything else?', { session: sessionOf(inner) });
    const seen = inputOf(model, model.calls.length - 1) as Array<Record<string, unknown>>;
    expect(seen.filter((item) => item.type === 'function_call').map((item) => item.callId)).toEqual([refundCall]);
    expect(seen.find((item) => item.type === 'function_call_result')?.output).toEqual({ type: 'text', text: 'refunded 30 EUR on A-1' });
    const after = await client.getReplayHistory({ tenantId, conversationId: await inner.getSessionId(), format: 'openai-responses' });
    expect(after.pendingApprovals).toEqual([]);
  });

  it("records a round's encrypted reasoning and gives it back right before its call while the turn is open; another model gets none", async () => {
    const inner = new MemorySession({ sessionId: uniqueName('conv') });
    const session = decorated(inner, 'gpt-test-1');
    const paris = uniqueName('call_paris');
    const reasoning = {
      type: 'reasoning' as const,
      id: 'rs_68a1f0c2d4e81',
      content: [{ type: 'input_text' as const, text: 'Paris first; the weather decides what to pack.' }],
      providerData: { id: 'rs_68a1f0c2d4e81', type: 'reasoning', encrypted_content: 'gAAAAABoofDCq1x0Zk2' },
    };
    const model = new ScriptedModel([
      [reasoning, functionCall('get_weather', { city: 'Paris' }, { callId: paris, id: 'fc_68a1f0c2d4e90' })],
      [functionCall('suggest_packing', { tempsC: [18] }, { callId: uniqueName('call_pack') })],
      [assistantMessage('Take an umbrella.', { id: 'msg_pack' })],
    ]);
    // The run stops right after the packing advice (no answer of the model's): the turn goes on with the next run. The
    // weather round's output reached the model; the trailing round's did not, and the replay trims it (per run).
    const agent = new Agent({
      name: 'travel',
      instructions: 'Help with travel.',
      model,
      tools: ALL_TOOLS,
      toolUseBehavior: { stopAtToolNames: ['suggest_packing'] },
    });
    await run(agent, 'Weather in Paris?', { session });
    // The reasoning is toolhistory's, with its round: the inner session holds the question only.
    expect((await inner.getItems()).map((item) => ('role' in item ? item.role : item.type))).toEqual(['user']);

    // The next question closes run 1 (ended after its tool, no answer: the turn goes on). The SDK reads the session
    // before it adds a run's input, so the host adds the question first and runs on the session's items.
    await session.addItems([{ type: 'message', role: 'user', content: 'So what do I pack?' }]);

    // Another model is given the round without the reasoning, and its call without the fc_ id.
    const other = await decorated(inner, 'gpt-5-mini').getItems();
    expect(other.map((item) => item.type)).toEqual(['message', 'function_call', 'function_call_result', 'message']);
    expect(other[1]).not.toHaveProperty('id');

    await run(agent, [], { session });
    const sent = model.calls[2].request.input as Array<Record<string, unknown>>;
    expect(sent.map((item) => item.type)).toEqual(['message', 'reasoning', 'function_call', 'function_call_result', 'message']);
    expect(sent[1]).toEqual({
      type: 'reasoning',
      id: reasoning.id,
      content: [{ type: 'input_text', text: reasoning.content[0].text }],
      providerData: { encrypted_content: reasoning.providerData.encrypted_content },
    });
    // The SDK strips a call's item id when it persists a run to a session (its own stores hold none either): the
    // session records an fc_ id only when it is given one, and the call goes back as the plain store gives it.
    expect(sent[2]).toMatchObject({ type: 'function_call', callId: paris });
    expect(sent[2]).not.toHaveProperty('id');
  });

  it('after a run that crashed, gives the next turn what the plain MemorySession gives, even where a crashed run’s rounds replay', async () => {
    // The SDK for JavaScript saves a run's items to its session only when the run ends: a run that throws (a killed worker's
    // tool, a model error) leaves nothing, not even its question, in the plain store, and nothing in toolhistory either. The
    // channel keeps crashed runs' progress (per_service_call), but there is none: the next turn starts clean, as it does with
    // the plain store.
    const cancelOrder = tool({
      name: 'cancel_order',
      description: 'Cancels an order.',
      parameters: { type: 'object', properties: { orderId: { type: 'string' } }, required: ['orderId'], additionalProperties: false },
      // The tool's error is not handed to the model: the run throws.
      errorFunction: null,
      execute: () => {
        throw new Error('worker killed');
      },
    });
    const crashing = (): [ScriptedModel, Agent] => {
      const model = new ScriptedModel([
        [functionCall('get_weather', { city: 'Paris' }, { callId: 'call_first' })],
        [functionCall('cancel_order', { orderId: 'A-1' }, { callId: 'call_cancel' })],
        [assistantMessage('Where were we?', { id: 'msg_resumed' })],
      ]);
      return [model, new Agent({ name: 'travel', model, tools: [...ALL_TOOLS, cancelOrder] })];
    };
    const lastInputAfterCrash = async (opened: () => Session) => {
      const [model, agent] = crashing();
      await expect(run(agent, 'Cancel A-1 unless Paris is sunny.', { session: opened() })).rejects.toThrow('worker killed');
      await run(agent, 'Still there?', { session: opened() });
      return inputOf(model, model.calls.length - 1);
    };
    const plain = new MemorySession();
    const inner = new MemorySession({ sessionId: uniqueName('conv') });

    const withToolHistory = await lastInputAfterCrash(() => decorated(inner, undefined, { channel: 'long-runs' }));
    expect(withToolHistory).toEqual(await lastInputAfterCrash(() => plain));
    expect(withToolHistory).toEqual([{ type: 'message', role: 'user', content: 'Still there?' }]);
    const recorded = [];
    for await (const invocation of client.listToolInvocations({ tenantId, conversationId: await inner.getSessionId() }))
      recorded.push(invocation);
    expect(recorded).toEqual([]);
  });

  it('records no reasoning for a model whose provider it cannot tell (provider: null), and keeps the text beside calls in inner', async () => {
    const inner = new MemorySession({ sessionId: uniqueName('conv') });
    const session = decorated(inner, 'some-litellm-model', { provider: null });
    const paris = uniqueName('call_paris');
    await session.addItems([{ type: 'message', role: 'user', content: 'Weather in Paris?' }]);
    await session.addItems([
      { type: 'reasoning', id: 'rs_unknown', content: [], providerData: { encrypted_content: 'sealed' } },
      { type: 'message', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: 'Checking.' }] },
      { type: 'function_call', callId: paris, name: 'get_weather', arguments: '{"city":"Paris"}' },
      { type: 'function_call_result', callId: paris, name: 'get_weather', status: 'completed', output: { type: 'text', text: 'rain' } },
    ]);
    await session.addItems([assistantMessage('Rain.', { id: 'msg_rain' }) as AgentInputItem]);

    const history = await client.getReplayHistory({ tenantId, conversationId: await inner.getSessionId(), format: 'openai-responses' });
    expect(history.turns.flatMap((turn) => turn.rounds.map((r) => [r.provider, r.reasoningJson, r.text]))).toEqual([['', '', '']]);
    expect(
      comparable(await session.getItems()).map(
        (item) => (item as { type?: string; role?: string }).role ?? (item as { type: string }).type,
      ),
    ).toEqual(['user', 'assistant', 'function_call', 'function_call_result', 'assistant']);
    expect((await inner.getItems()).map((item) => ('role' in item ? item.role : item.type))).toEqual(['user', 'assistant', 'assistant']);
  });

  it('takes a popped answer’s run off the replay: the calls go with their answer (regenerate)', async () => {
    const session = decorated();
    const weather = uniqueName('call_weather');
    const question: AgentInputItem = { type: 'message', role: 'user', content: 'Weather in Paris?' };
    const answer = assistantMessage('Rain.', { id: 'msg_rain' }) as AgentInputItem;
    await session.addItems([question]);
    await session.addItems([
      { type: 'function_call', callId: weather, name: 'get_weather', arguments: '{"city":"Paris"}' },
      { type: 'function_call_result', callId: weather, name: 'get_weather', status: 'completed', output: { type: 'text', text: 'rain' } },
    ]);
    await session.addItems([answer]);
    expect((await session.getItems()).map((item) => item.type)).toEqual(['message', 'function_call', 'function_call_result', 'message']);

    expect(comparable([await session.popItem()])).toEqual(comparable([answer]));
    expect(await session.getItems()).toEqual([question]);
  });

  // The Session behaviours, as a table: the same steps on the plain MemorySession and on the decorator, then what
  // each pop returned and getItems(limit) for each limit.
  type Step = (session: Session) => Promise<unknown>;
  const add =
    (...items: AgentInputItem[]): Step =>
    (session) =>
      session.addItems(structuredClone(items));
  const pop: Step = (session) => session.popItem();
  const clear: Step = (session) => session.clearSession();
  const USER: AgentInputItem = { type: 'message', role: 'user', content: 'Where is A-1?' };
  const USER_2: AgentInputItem = { type: 'message', role: 'user', content: 'And B-2?' };
  const ANSWER: AgentInputItem = {
    type: 'message',
    role: 'assistant',
    id: 'msg-1',
    status: 'completed',
    content: [{ type: 'output_text', text: 'Shipped.' }],
  };
  const CALL: AgentInputItem = { type: 'function_call', callId: 'call-a', name: 'get_weather', arguments: '{"city":"Paris"}' };
  const CALL_2: AgentInputItem = { type: 'function_call', callId: 'call-b', name: 'search_flights', arguments: '{"to":"Oslo"}' };
  const OUTPUT: AgentInputItem = {
    type: 'function_call_result',
    callId: 'call-a',
    name: 'get_weather',
    status: 'completed',
    output: { type: 'text', text: 'rain' },
  };
  const OUTPUT_2: AgentInputItem = {
    type: 'function_call_result',
    callId: 'call-b',
    name: 'search_flights',
    status: 'completed',
    output: { type: 'text', text: DEFAULT_TOOL_ERROR_TEXT },
  };
  const TURN = [add(USER), add(CALL, CALL_2, OUTPUT, OUTPUT_2), add(ANSWER)];

  it.each<[string, Step[], Array<number | undefined>]>([
    ['empty', [], [undefined, 1]],
    ['messages only, in order', [add(USER), add(ANSWER), add(USER_2)], [undefined, 1, 2, 3, 5, 0]],
    ['a turn with parallel calls and a failure, in order', TURN, [undefined, 1, 2, 3, 4, 6, 7]],
    ['two turns', [...TURN, add(USER_2)], [undefined, 2, 4]],
    ['a popped user message', [add(USER), pop], [undefined]],
    ['a popped question after a turn', [...TURN, add(USER_2), pop], [undefined, 1]],
    ['cleared', [...TURN, clear], [undefined]],
    ['cleared, then a new turn', [...TURN, clear, add(USER_2), add(ANSWER)], [undefined, 1]],
  ])('%s: as the plain MemorySession', async (_case, steps, limits) => {
    const plain = new MemorySession();
    const session = decorated();
    const plainPops: unknown[] = [];
    const decoratedPops: unknown[] = [];
    for (const step of steps) plainPops.push(await step(plain));
    for (const step of steps) decoratedPops.push(await step(session));
    expect(comparable(decoratedPops.filter((p) => p !== undefined))).toEqual(comparable(plainPops.filter((p) => p !== undefined)));
    for (const limit of limits) {
      expect({ limit, items: comparable(await session.getItems(limit)) }).toEqual({
        limit,
        items: comparable(await plain.getItems(limit)),
      });
    }
  });

  it('records the fc_ id of a call it is given with the call, and gives it back right after the round’s reasoning', async () => {
    const inner = new MemorySession({ sessionId: uniqueName('conv') });
    const session = decorated(inner, 'gpt-test-1');
    const reasoning: AgentInputItem = {
      type: 'reasoning',
      id: 'rs_given',
      content: [],
      providerData: { encrypted_content: 'gAAAAABgiven' },
    };
    const weather = uniqueName('call_weather');
    const packing = uniqueName('call_pack');
    await session.addItems([USER]);
    await session.addItems([
      reasoning,
      { ...CALL, callId: weather, id: 'fc_given' } as AgentInputItem,
      { ...OUTPUT, callId: weather } as AgentInputItem,
    ]);
    // A second round whose output the model never saw: the first round's output reached a model call.
    await session.addItems([
      { ...CALL_2, callId: packing },
      { ...OUTPUT_2, callId: packing },
    ]);
    await session.addItems([USER_2]);
    const items = (await session.getItems()) as Array<Record<string, unknown>>;
    expect(items.map((item) => item.type)).toEqual(['message', 'reasoning', 'function_call', 'function_call_result', 'message']);
    expect(items[1]).toMatchObject({ id: 'rs_given', providerData: { encrypted_content: 'gAAAAABgiven' } });
    expect(items[2]).toMatchObject({ id: 'fc_given', callId: weather });
  });

  it('gives a call saved without an id one id, the same on the call and its result and on every replay', async () => {
    // A host may save items of another model's loop; the service derives the id from the run, round and sequence.
    const session = decorated();
    for (const step of [
      add(USER),
      add({ ...CALL, callId: '' } as AgentInputItem, { ...OUTPUT, callId: '' } as AgentInputItem),
      add(ANSWER),
      add(USER_2),
    ])
      await step(session);
    const items = (await session.getItems()) as Array<Record<string, unknown>>;
    expect(items.map((item) => item.type)).toEqual(['message', 'function_call', 'function_call_result', 'message', 'message']);
    const derived = items[1].callId;
    expect(derived).toEqual(expect.stringMatching(/.+/));
    expect(items[2]).toMatchObject({ callId: derived, output: { type: 'text', text: 'rain' } });
    expect(((await session.getItems()) as Array<Record<string, unknown>>)[1].callId).toBe(derived);
    const recorded = [];
    for await (const invocation of client.listToolInvocations({ tenantId, conversationId: await session.conversation() }))
      recorded.push(invocation);
    expect(recorded.map((i) => i.toolCallId)).toEqual(['']);
  });

  it('clearSession keeps the recorded calls for audit unless asked to erase them', async () => {
    const session = decorated();
    for (const step of TURN) await step(session);
    const conversationId = await session.conversation();
    await session.clearSession();
    expect(await session.getItems()).toEqual([]);
    expect((await client.getReplayHistory({ tenantId, conversationId, format: 'openai-responses' })).turns).toHaveLength(1);
    await session.clearSession({ erase: true });
    expect((await client.getReplayHistory({ tenantId, conversationId, format: 'openai-responses' })).turns).toEqual([]);
  });

  it('gives the model the same input as the plain MemorySession over generated runs', async () => {
    const kinds = fc.constantFrom('get_weather', 'search_flights');
    // A round: its calls, and whether the model says something beside them ("I'll look it up").
    const round = fc.tuple(fc.array(kinds, { minLength: 1, maxLength: 3 }), fc.boolean());
    const runs = fc.array(fc.array(round, { maxLength: 2 }), { minLength: 1, maxLength: 3 });
    await fc.assert(
      fc.asyncProperty(runs, async (generated) => {
        const prefix = uniqueName('call');
        const turns: Turn[] = generated.map((rounds, turn) => [
          `question ${turn}`,
          [
            ...rounds.map(([calls, says], r) => [
              ...(says ? [assistantMessage(`checking ${turn}-${r}`, { id: `msg-${turn}-${r}` })] : []),
              ...calls.map((kind, c) =>
                functionCall(kind, kind === 'get_weather' ? { city: `C-${turn}-${r}-${c}` } : { to: `T-${c}` }, {
                  callId: `${prefix}-${turn}-${r}-${c}`,
                }),
              ),
            ]),
            [assistantMessage(`answer ${turn}`, { id: `msg-${turn}` })],
          ],
        ]);
        expect(await turnInputs(decorated(), turns)).toEqual(await turnInputs(new MemorySession(), turns));
      }),
      { numRuns: 8 },
    );
  });
});
