import { Agent, run, RunState, type RunToolCallOutputItem } from '@openai/agents';
import { ScriptedModel } from '@openai/agents/testing';
import { agentsRunRecord, isSdkToolError, resumePointOf, runViewOfState, toolResultOf, usageOf } from './agents-run-mapper';
import { ALL_TOOLS, assistantMessage, functionCall, response } from './scripted-agents.fixture';

const agentWith = (model: ScriptedModel, options: Partial<ConstructorParameters<typeof Agent>[0]> = {}) =>
  new Agent({ name: 'travel', instructions: 'Help with travel.', model, tools: ALL_TOOLS, ...options });

describe('agentsRunRecord', () => {
  it('makes each model response that asked for tools a round: calls in response order, outputs as the model got them, tokens per model call', async () => {
    const model = new ScriptedModel([
      response(
        [
          functionCall('get_weather', { city: 'Paris' }, { callId: 'call_paris' }),
          functionCall('get_weather', { city: 'Berlin' }, { callId: 'call_berlin' }),
          functionCall('search_flights', { to: 'Oslo' }, { callId: 'call_flights' }),
          functionCall('book_hotel', { city: 'Oslo' }, { callId: 'call_hotel' }),
        ],
        [50, 20],
      ),
      response(
        [assistantMessage('Packing first.'), functionCall('suggest_packing', { tempsC: [18, 12] }, { callId: 'call_pack' })],
        [90, 15],
      ),
      response([assistantMessage('Take an umbrella.', { id: 'msg_final' })], [130, 25]),
    ]);
    const result = await run(agentWith(model), 'Weather in Paris and Berlin?');

    const record = agentsRunRecord(result);
    expect(record.rounds.map((r) => [r.roundIndex, r.calls.map((c) => [c.sequenceIndex, c.toolCallId, c.toolName, c.arguments])])).toEqual([
      [
        0,
        [
          [0, 'call_paris', 'get_weather', { city: 'Paris' }],
          [1, 'call_berlin', 'get_weather', { city: 'Berlin' }],
          [2, 'call_flights', 'search_flights', { to: 'Oslo' }],
          [3, 'call_hotel', 'book_hotel', { city: 'Oslo' }],
        ],
      ],
      [1, [[0, 'call_pack', 'suggest_packing', { tempsC: [18, 12] }]]],
    ]);
    expect(record.rounds[0].results).toEqual([
      // JSON the tool returned stays JSON (the model got its JSON text).
      {
        roundIndex: 0,
        sequenceIndex: 0,
        toolCallId: 'call_paris',
        toolName: 'get_weather',
        result: { city: 'Paris', tempC: 18, sky: 'rain' },
        isError: false,
      },
      {
        roundIndex: 0,
        sequenceIndex: 1,
        toolCallId: 'call_berlin',
        toolName: 'get_weather',
        result: { city: 'Berlin', tempC: 12, sky: 'rain' },
        isError: false,
      },
      // The SDK's default errorFunction: its fixed text, an error.
      {
        roundIndex: 0,
        sequenceIndex: 2,
        toolCallId: 'call_flights',
        toolName: 'search_flights',
        result: 'An error occurred while running the tool. Please try again.',
        isError: true,
      },
      // toolErrorFunction: the text it made, marked as an error.
      {
        roundIndex: 0,
        sequenceIndex: 3,
        toolCallId: 'call_hotel',
        toolName: 'book_hotel',
        result: 'booking failed: fully booked',
        isError: true,
      },
    ]);
    expect(record.rounds[1].results).toEqual([
      {
        roundIndex: 1,
        sequenceIndex: 0,
        toolCallId: 'call_pack',
        toolName: 'suggest_packing',
        result: 'umbrella and a scarf for [18,12]',
        isError: false,
      },
    ]);
    expect(record.usage).toEqual([
      { inputTokens: 50, outputTokens: 20, model: 'gpt-test-1' },
      { inputTokens: 90, outputTokens: 15, model: 'gpt-test-1' },
      { inputTokens: 130, outputTokens: 25, model: 'gpt-test-1' },
    ]);
    expect(record).toMatchObject({
      decisions: [],
      resumedResults: [],
      awaitingApproval: false,
      endedAfterTools: false,
      finalMessageId: 'msg_final',
      lastResponseId: expect.stringMatching(/^resp_/),
    });
    expect(record.rounds.flatMap((r) => r.approvalRequests)).toEqual([]);
  });

  it('says the run ended right after executing tools when the final output is a tool output', async () => {
    const model = new ScriptedModel([response([functionCall('get_weather', { city: 'Rome' }, { callId: 'call_rome' })], [10, 2])]);
    const result = await run(agentWith(model, { toolUseBehavior: 'stop_on_first_tool' }), 'Rome?');
    const record = agentsRunRecord(result);
    expect(record.endedAfterTools).toBe(true);
    expect(record.rounds[0].results.map((r) => r.toolCallId)).toEqual(['call_rome']);
    expect(record.finalMessageId).toBeUndefined();
  });

  describe('approvals', () => {
    const asking = () =>
      new ScriptedModel([
        response([functionCall('get_weather', { city: 'Paris' }, { callId: 'call_w0' })], [10, 5]),
        response(
          [
            functionCall('refund', { orderId: 'A-1', amountEur: 120 }, { callId: 'call_refund' }),
            functionCall('get_weather', { city: 'Paris' }, { callId: 'call_w1' }),
          ],
          [20, 6],
        ),
        response([assistantMessage('Refund done.', { id: 'msg_done' })], [30, 7]),
      ]);

    it('lists the calls that stopped the run for approval in their round; the round’s other calls ran', async () => {
      const result = await run(agentWith(asking()), 'Refund A-1');
      const record = agentsRunRecord(result);
      expect(record.awaitingApproval).toBe(true);
      expect(record.rounds.map((r) => r.approvalRequests.map((c) => [c.roundIndex, c.sequenceIndex, c.toolCallId]))).toEqual([
        [],
        [[1, 0, 'call_refund']],
      ]);
      expect(record.rounds[1].results.map((r) => r.toolCallId)).toEqual(['call_w1']);
      expect(record.usage).toHaveLength(2);
    });

    it('records, in the run that resumes, the approval and the approved call’s output with the round and sequence of the run that asked', async () => {
      const first = await run(agentWith(asking()), 'Refund A-1');
      // As a host that resumes in a later request would: the state kept as a string, restored there.
      const agent = agentWith(new ScriptedModel([response([assistantMessage('Refund done.', { id: 'msg_done' })], [40, 8])]));
      const state = await RunState.fromString(agent, first.state.toString());
      const resumePoint = resumePointOf(state);
      expect(resumePoint).toMatchObject({ responseCount: 2, pending: [{ toolCallId: 'call_refund', toolName: 'refund' }] });
      state.approve(state.getInterruptions()[0]);
      const resumed = await run(agent, state);

      const record = agentsRunRecord(resumed, resumePoint);
      expect(record.decisions).toEqual([
        { roundIndex: 1, sequenceIndex: 0, toolCallId: 'call_refund', toolName: 'refund', approved: true },
      ]);
      expect(record.resumedResults).toEqual([
        {
          roundIndex: 1,
          sequenceIndex: 0,
          toolCallId: 'call_refund',
          toolName: 'refund',
          result: 'refunded 120 EUR on A-1',
          isError: false,
        },
      ]);
      // Nothing of the run that asked again: its rounds, its outputs, its tokens.
      expect(record.rounds).toEqual([]);
      expect(record.usage).toEqual([{ inputTokens: 40, outputTokens: 8, model: 'gpt-test-1' }]);
      expect(record).toMatchObject({ awaitingApproval: false, endedAfterTools: false, finalMessageId: 'msg_done' });
    });

    it('records a rejection with its message and no output: the call did not run', async () => {
      const model = asking();
      const agent = agentWith(model);
      const first = await run(agent, 'Refund A-1');
      const resumePoint = resumePointOf(first.state);
      first.state.reject(first.interruptions[0], { message: 'Refunds over 100 EUR need a manager.' });
      const resumed = await run(agent, first.state);

      const record = agentsRunRecord(resumed, resumePoint);
      expect(record.decisions).toEqual([
        {
          roundIndex: 1,
          sequenceIndex: 0,
          toolCallId: 'call_refund',
          toolName: 'refund',
          approved: false,
          reason: 'Refunds over 100 EUR need a manager.',
        },
      ]);
      expect(record.resumedResults).toEqual([]);
      expect(record.rounds).toEqual([]);
      // The model was told, and answered.
      expect(JSON.stringify(model.calls[2].request.input)).toContain('Refunds over 100 EUR need a manager.');
    });

    it('goes on numbering rounds over the state: a resumed run’s own rounds follow the asking run’s', async () => {
      const model = new ScriptedModel([
        response([functionCall('refund', { orderId: 'B-2', amountEur: 300 }, { callId: 'call_refund' })], [10, 5]),
        response([functionCall('suggest_packing', { tempsC: [3] }, { callId: 'call_pack' })], [20, 5]),
        response([assistantMessage('Done.')], [30, 5]),
      ]);
      const agent = agentWith(model);
      const first = await run(agent, 'Refund B-2');
      const resumePoint = resumePointOf(first.state);
      first.state.approve(first.interruptions[0]);
      const record = agentsRunRecord(await run(agent, first.state), resumePoint);
      expect(record.resumedResults.map((r) => [r.roundIndex, r.toolCallId])).toEqual([[0, 'call_refund']]);
      expect(record.rounds.map((r) => [r.roundIndex, r.calls.map((c) => c.toolCallId), r.results.map((c) => c.toolCallId)])).toEqual([
        [1, ['call_pack'], ['call_pack']],
      ]);
      expect(record.usage.map((u) => u.inputTokens)).toEqual([20, 30]);
    });

    it('records no decision for a call still waiting when the run resumes without an answer', async () => {
      const agent = agentWith(asking());
      const first = await run(agent, 'Refund A-1');
      const resumePoint = resumePointOf(first.state);
      const again = await run(agent, first.state);
      const record = agentsRunRecord(again, resumePoint);
      expect(record.decisions).toEqual([]);
      // Still waiting, and asked for by the run that stopped: not asked again.
      expect(record.awaitingApproval).toBe(true);
      expect(record.rounds).toEqual([]);
    });
  });

  it('reads the state an SDK error carries', async () => {
    const model = new ScriptedModel([
      response([functionCall('get_weather', { city: 'Paris' }, { callId: 'call_1' })], [10, 5]),
      response([functionCall('get_weather', { city: 'Rome' }, { callId: 'call_2' })], [12, 5]),
    ]);
    const error = await run(agentWith(model), 'Weather?', { maxTurns: 1 }).catch((e: unknown) => e);
    const state = (error as { state: RunState<unknown, Agent> }).state;
    const record = agentsRunRecord(runViewOfState(state));
    expect(record.rounds.map((r) => r.calls.map((c) => c.toolCallId))).toEqual([['call_1']]);
    expect(record.rounds[0].results.map((r) => r.toolCallId)).toEqual(['call_1']);
    expect(record.usage.map((u) => u.inputTokens)).toEqual([10]);
  });
});

describe('toolResultOf', () => {
  const output = (returned: unknown, sent: RunToolCallOutputItem['rawItem']['output']) =>
    ({
      type: 'tool_call_output_item',
      output: returned,
      rawItem: { type: 'function_call_result', callId: 'c', name: 't', status: 'completed', output: sent },
    }) as RunToolCallOutputItem;

  it.each([
    ['a JSON object as JSON', { a: [1, null] }, { type: 'text', text: '{"a":[1,null]}' }, { a: [1, null] }],
    ['an array as JSON', [1, 'x'], { type: 'text', text: '[1,"x"]' }, [1, 'x']],
    ['a number as a number', 42, { type: 'text', text: '42' }, 42],
    ['a boolean as a boolean', false, { type: 'text', text: 'false' }, false],
    ['null as the text the model got', null, { type: 'text', text: 'null' }, 'null'],
    ['a string as it is', 'done', 'done', 'done'],
    [
      'what the model got when the output is not the JSON text of what the tool returned',
      { a: 1 },
      { type: 'text', text: 'redacted' },
      'redacted',
    ],
    [
      'a class instance as the text the model got',
      new Date(0),
      { type: 'text', text: '1970-01-01T00:00:00.000Z' },
      '1970-01-01T00:00:00.000Z',
    ],
  ])('records %s', (_what, returned, sent, expected) => {
    expect(toolResultOf(output(returned, sent as RunToolCallOutputItem['rawItem']['output']))).toEqual(expected);
  });

  it('records an output that is not text as its JSON text', () => {
    const image = { type: 'image' as const, image: 'https://example.com/a.png' };
    expect(toolResultOf(output({ type: 'image', image: 'https://example.com/a.png' }, image))).toBe(JSON.stringify(image));
  });

  it('tells the SDK’s default error texts', () => {
    const context = {} as Parameters<typeof isSdkToolError>[1];
    expect(
      isSdkToolError(output('x', { type: 'text', text: 'An error occurred while running the tool. Please try again.' }), context),
    ).toBe(true);
    expect(isSdkToolError(output('x', { type: 'text', text: "Tool 'slow' timed out after 50ms." }), context)).toBe(true);
    expect(isSdkToolError(output('x', { type: 'text', text: 'An error occurred, said the tool.' }), context)).toBe(false);
  });
});

describe('usageOf', () => {
  it('takes the model from the raw response, and counts missing tokens as 0', () => {
    expect(usageOf(response([], [7, 3]))).toEqual({ inputTokens: 7, outputTokens: 3, model: 'gpt-test-1' });
    expect(usageOf({ ...response([], [7, 3]), providerData: undefined })).toEqual({ inputTokens: 7, outputTokens: 3 });
  });
});

describe('agentsRunRecord with a reasoning model', () => {
  it("records each round's reasoning items (as the Responses API gives them), its calls' fc_ ids and its text; none for a round without", async () => {
    const reasoning = {
      type: 'reasoning' as const,
      id: 'rs_1',
      content: [{ type: 'input_text' as const, text: 'Paris first.' }],
      providerData: { id: 'rs_1', type: 'reasoning', encrypted_content: 'gAAAAABo' },
    };
    const model = new ScriptedModel([
      response(
        [
          reasoning,
          assistantMessage('Checking Paris.'),
          functionCall('get_weather', { city: 'Paris' }, { callId: 'call_paris', id: 'fc_paris' }),
        ],
        [50, 20],
      ),
      response([functionCall('suggest_packing', { tempsC: [18] }, { callId: 'call_pack' })], [60, 10]),
      response([assistantMessage('Take an umbrella.')], [90, 5]),
    ]);
    const record = agentsRunRecord(await run(agentWith(model), 'Paris?'));
    expect(record.rounds.map((round) => round.response)).toEqual([
      {
        reasoning: {
          provider: 'openai',
          model: 'gpt-test-1',
          items: [
            { type: 'reasoning', id: 'rs_1', summary: [{ type: 'summary_text', text: 'Paris first.' }], encrypted_content: 'gAAAAABo' },
          ],
          callItemIds: { call_paris: 'fc_paris' },
        },
        text: 'Checking Paris.',
      },
      undefined,
    ]);
  });
});
