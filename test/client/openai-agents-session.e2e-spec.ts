import { Agent, type AgentInputItem, MemorySession, run, type Session } from '@openai/agents';
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
 * it follows; without reasoning the API takes the call without one).
 */
const comparable = (items: readonly unknown[]) =>
  items.map((item) => {
    const entry = item as Record<string, unknown>;
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
    ({ stack, publisher, client } = await startClientStack('agentsession', HOUR_LONG_FRESHNESS));
  });

  afterAll(async () => {
    await stopClientStack({ stack, publisher, client });
  });

  const decorated = (inner: Session = new MemorySession({ sessionId: uniqueName('conv') })) =>
    new ToolHistorySession(inner, { publisher, client, tenantId, channel: 'web' });

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
    const runs = fc.array(fc.array(fc.array(kinds, { minLength: 1, maxLength: 3 }), { maxLength: 2 }), { minLength: 1, maxLength: 3 });
    await fc.assert(
      fc.asyncProperty(runs, async (generated) => {
        const prefix = uniqueName('call');
        const turns: Turn[] = generated.map((rounds, turn) => [
          `question ${turn}`,
          [
            ...rounds.map((calls, r) =>
              calls.map((kind, c) =>
                functionCall(kind, kind === 'get_weather' ? { city: `C-${turn}-${r}-${c}` } : { to: `T-${c}` }, {
                  callId: `${prefix}-${turn}-${r}-${c}`,
                }),
              ),
            ),
            [assistantMessage(`answer ${turn}`, { id: `msg-${turn}` })],
          ],
        ]);
        expect(await turnInputs(decorated(), turns)).toEqual(await turnInputs(new MemorySession(), turns));
      }),
      { numRuns: 8 },
    );
  });
});
