import { Agent, run, RunState } from '@openai/agents';
import { modelError, ScriptedModel } from '@openai/agents/testing';
import { deriveEventId } from '../event-ids';
import { serializeValidEvent } from '../event-validation';
import { PUBLISHED_SCHEMA_VERSION, RunPublisher, type RunScope } from '../tool-event-publisher';
import { recordAgentsRun, recordedRun } from './agents-run-recorder';
import { ALL_TOOLS, assistantMessage, functionCall, response } from './scripted-agents.fixture';

/** A real RunPublisher whose events are checked against the contract and kept instead of sent. */
function capturingRun(runId = 'r') {
  const scope: RunScope = { tenantId: 't', conversationId: 'c', channel: 'web', runId };
  const events: Array<Record<string, unknown>> = [];
  const publisher = new RunPublisher(scope, async (batch) =>
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
  return { run: publisher, events };
}

/** Each event as [type, roundIndex, sequenceIndex, toolCallId], what says where it belongs. */
const steps = (events: Array<Record<string, unknown>>) =>
  events.map((e) => [e.type, e.roundIndex, e.sequenceIndex, e.toolCallId].filter((part) => part !== undefined));

const agentWith = (model: ScriptedModel, options: Partial<ConstructorParameters<typeof Agent>[0]> = {}) =>
  new Agent({ name: 'travel', instructions: 'Help with travel.', model, tools: ALL_TOOLS, ...options });

describe('AgentsRunRecorder', () => {
  it('records each round (calls, then outputs) and RunCompleted with stop, the final message id and the tokens of every model call', async () => {
    const { run: target, events } = capturingRun();
    const model = new ScriptedModel([
      response(
        [
          functionCall('get_weather', { city: 'Paris' }, { callId: 'call_paris' }),
          functionCall('get_weather', { city: 'Berlin' }, { callId: 'call_berlin' }),
        ],
        [50, 20],
      ),
      response([functionCall('suggest_packing', { tempsC: [18, 12] }, { callId: 'call_pack' })], [90, 15]),
      response([assistantMessage('Umbrella.', { id: 'msg_final' })], [130, 25]),
    ]);
    const result = await recordedRun(target, 'Weather?', (input) => run(agentWith(model), input));
    expect(result.finalOutput).toBe('Umbrella.');

    expect(steps(events)).toEqual([
      ['ToolCallRequested', 0, 0, 'call_paris'],
      ['ToolCallRequested', 0, 1, 'call_berlin'],
      ['ToolResultReceived', 0, 0, 'call_paris'],
      ['ToolResultReceived', 0, 1, 'call_berlin'],
      ['ToolCallRequested', 1, 0, 'call_pack'],
      ['ToolResultReceived', 1, 0, 'call_pack'],
      ['RunCompleted'],
    ]);
    expect(events[0]).toMatchObject({ toolName: 'get_weather', arguments: { city: 'Paris' } });
    expect(events[2]).toMatchObject({ result: { city: 'Paris', tempC: 18, sky: 'rain' }, isError: false });
    expect(events.at(-1)).toMatchObject({
      assistantMessageId: 'msg_final',
      finishReason: 'stop',
      usage: [
        { inputTokens: 50, outputTokens: 20, model: 'gpt-test-1' },
        { inputTokens: 90, outputTokens: 15, model: 'gpt-test-1' },
        { inputTokens: 130, outputTokens: 25, model: 'gpt-test-1' },
      ],
    });
  });

  it('takes the host’s assistantMessageId, else the last response id when the model gave its message no id', async () => {
    const scripted = () => new ScriptedModel([response([assistantMessage('Hi.')], [5, 1])]);
    const byHost = capturingRun();
    await recordedRun(byHost.run, 'Hi', (input) => run(agentWith(scripted()), input), { assistantMessageId: 'msg-a1' });
    expect(byHost.events).toEqual([expect.objectContaining({ type: 'RunCompleted', assistantMessageId: 'msg-a1', finishReason: 'stop' })]);

    const byDefault = capturingRun();
    const result = await recordedRun(byDefault.run, 'Hi', (input) => run(agentWith(scripted()), input));
    expect(byDefault.events[0]).toMatchObject({ assistantMessageId: result.lastResponseId });
  });

  it('records tool_limit when the final output is a tool’s', async () => {
    const { run: target, events } = capturingRun();
    const model = new ScriptedModel([response([functionCall('get_weather', { city: 'Rome' }, { callId: 'call_rome' })], [10, 2])]);
    await recordedRun(target, 'Rome?', (input) => run(agentWith(model, { toolUseBehavior: 'stop_on_first_tool' }), input), {
      assistantMessageId: 'msg-rome',
    });
    expect(events.at(-1)).toMatchObject({ type: 'RunCompleted', finishReason: 'tool_limit', assistantMessageId: 'msg-rome' });
  });

  describe('citedSourcesFromAnswer', () => {
    const searchThenAnswer = (text: string) =>
      new ScriptedModel([
        response([functionCall('get_weather', { city: 'Paris' }, { callId: 'call_1' })], [10, 5]),
        response([assistantMessage(text, { id: 'msg_final' })], [20, 4]),
      ]);

    it.each<[string, boolean | undefined, string, number[] | undefined]>([
      ['on: the numbers the final output cites', true, 'Rain [source4], says the radar [source2].', [2, 4]],
      ['on: a final output that cites nothing is []', true, 'Rain.', []],
      ['off: left out', false, 'Rain [source4].', undefined],
      ['by default: left out', undefined, 'Rain [source4].', undefined],
    ])('%s', async (_d, citedSourcesFromAnswer, text, expected) => {
      const { run: target, events } = capturingRun();
      await recordedRun(
        target,
        'Rain?',
        (input) => run(agentWith(searchThenAnswer(text)), input),
        citedSourcesFromAnswer === undefined ? {} : { citedSourcesFromAnswer },
      );

      const completed = events.at(-1)!;
      expect(completed).toMatchObject({ type: 'RunCompleted', finishReason: 'stop' });
      if (expected === undefined) expect(completed).not.toHaveProperty('citedSources');
      else expect(completed.citedSources).toEqual(expected);
    });

    it('reads a structured final output as its JSON text, and a streamed run once its stream completes', async () => {
      const structured = capturingRun();
      const outputType = {
        type: 'json_schema' as const,
        name: 'answer',
        strict: true,
        schema: {
          type: 'object' as const,
          properties: { answer: { type: 'string' } },
          required: ['answer'],
          additionalProperties: false as const,
        },
      };
      const answer = JSON.stringify({ answer: 'Rain [source3] and wind [source1].' });
      const result = await recordedRun(
        structured.run,
        'Rain?',
        (input) => run(agentWith(searchThenAnswer(answer), { outputType }), input),
        {
          citedSourcesFromAnswer: true,
        },
      );
      expect(result.finalOutput).toEqual({ answer: 'Rain [source3] and wind [source1].' });
      expect(structured.events.at(-1)).toMatchObject({ type: 'RunCompleted', citedSources: [1, 3] });

      const streamedRun = capturingRun();
      const recorder = recordAgentsRun(streamedRun.run, { citedSourcesFromAnswer: true });
      const streamed = await recorder.record('Rain?', (input) =>
        run(agentWith(searchThenAnswer('Rain [source5].')), input, { stream: true }),
      );
      for await (const _event of streamed) {
        // The host consumes the stream.
      }
      await recorder.recorded;
      expect(streamedRun.events.at(-1)).toMatchObject({ type: 'RunCompleted', citedSources: [5] });
    });

    it('leaves them out of a run that ends without the model’s answer (a later run may cite its results), and of RunFailed', async () => {
      const asked = capturingRun();
      const asking = new ScriptedModel([
        response([functionCall('refund', { orderId: 'A-1', amountEur: 120 }, { callId: 'call_refund' })], [20, 6]),
      ]);
      await recordedRun(asked.run, 'Refund A-1', (input) => run(agentWith(asking), input), { citedSourcesFromAnswer: true });
      expect(asked.events.at(-1)).toMatchObject({ type: 'RunCompleted', finishReason: 'tool_limit' });
      expect(asked.events.at(-1)).not.toHaveProperty('citedSources');

      const toolOutput = capturingRun();
      const once = new ScriptedModel([response([functionCall('get_weather', { city: 'Rome' }, { callId: 'call_rome' })], [10, 2])]);
      await recordedRun(toolOutput.run, 'Rome?', (input) => run(agentWith(once, { toolUseBehavior: 'stop_on_first_tool' }), input), {
        citedSourcesFromAnswer: true,
      });
      expect(toolOutput.events.at(-1)).toMatchObject({ type: 'RunCompleted', finishReason: 'tool_limit' });
      expect(toolOutput.events.at(-1)).not.toHaveProperty('citedSources');

      const failed = capturingRun();
      const failing = new ScriptedModel([modelError(new Error('Rate limit reached'))]);
      await expect(
        recordedRun(failed.run, 'Rain?', (input) => run(agentWith(failing), input), { citedSourcesFromAnswer: true }),
      ).rejects.toThrow('Rate limit reached');
      expect(failed.events).toEqual([expect.objectContaining({ type: 'RunFailed' })]);
      expect(failed.events[0]).not.toHaveProperty('citedSources');
    });
  });

  describe('failures', () => {
    it('records the rounds and RunFailed with the usage of the state the SDK error carries, and rethrows', async () => {
      const { run: target, events } = capturingRun();
      const model = new ScriptedModel([
        response([functionCall('get_weather', { city: 'Paris' }, { callId: 'call_1' })], [10, 5]),
        response([functionCall('get_weather', { city: 'Rome' }, { callId: 'call_2' })], [12, 5]),
      ]);
      await expect(recordedRun(target, 'Weather?', (input) => run(agentWith(model), input, { maxTurns: 1 }))).rejects.toThrow(
        'Max turns (1) exceeded',
      );
      expect(steps(events)).toEqual([['ToolCallRequested', 0, 0, 'call_1'], ['ToolResultReceived', 0, 0, 'call_1'], ['RunFailed']]);
      expect(events.at(-1)).toMatchObject({
        error: { code: 'MaxTurnsExceededError', message: 'Max turns (1) exceeded' },
        usage: [{ inputTokens: 10, outputTokens: 5, model: 'gpt-test-1' }],
      });
    });

    it('records RunFailed alone for an error that carries no state, with its code', async () => {
      const { run: target, events } = capturingRun();
      const model = new ScriptedModel([
        response([functionCall('get_weather', { city: 'Paris' }, { callId: 'call_1' })], [10, 5]),
        modelError(Object.assign(new Error('Rate limit reached'), { code: 'rate_limit_exceeded' })),
      ]);
      await expect(recordedRun(target, 'Weather?', (input) => run(agentWith(model), input))).rejects.toThrow('Rate limit reached');
      expect(events).toEqual([
        expect.objectContaining({ type: 'RunFailed', error: { code: 'rate_limit_exceeded', message: 'Rate limit reached' } }),
      ]);
      expect(events[0]).not.toHaveProperty('usage');
    });

    it('records a streamed run once its stream completes, and a streamed failure with the rounds and usage of its state', async () => {
      const ok = capturingRun();
      const recorder = recordAgentsRun(ok.run, { assistantMessageId: 'msg-s' });
      const okModel = new ScriptedModel([
        response([functionCall('get_weather', { city: 'Paris' }, { callId: 'call_1' })], [10, 5]),
        response([assistantMessage('18 degrees.')], [20, 4]),
      ]);
      const streamed = await recorder.record('Weather?', (input) => run(agentWith(okModel), input, { stream: true }));
      expect(ok.events).toEqual([]);
      for await (const _event of streamed) {
        // The host consumes the stream.
      }
      await recorder.recorded;
      expect(steps(ok.events)).toEqual([['ToolCallRequested', 0, 0, 'call_1'], ['ToolResultReceived', 0, 0, 'call_1'], ['RunCompleted']]);
      expect(ok.events.at(-1)).toMatchObject({
        assistantMessageId: 'msg-s',
        finishReason: 'stop',
        usage: [{ inputTokens: 10 }, { inputTokens: 20 }],
      });

      const failing = capturingRun();
      const failingRecorder = recordAgentsRun(failing.run);
      const failingModel = new ScriptedModel([
        response([functionCall('get_weather', { city: 'Paris' }, { callId: 'call_1' })], [10, 5]),
        modelError(Object.assign(new Error('Rate limit reached'), { code: 'rate_limit_exceeded' })),
      ]);
      const failingStream = await failingRecorder.record('Weather?', (input) => run(agentWith(failingModel), input, { stream: true }));
      await expect(
        (async () => {
          for await (const _event of failingStream) {
            // The host consumes the stream until it fails.
          }
        })(),
      ).rejects.toThrow('Rate limit reached');
      await failingRecorder.recorded;
      expect(steps(failing.events)).toEqual([['ToolCallRequested', 0, 0, 'call_1'], ['ToolResultReceived', 0, 0, 'call_1'], ['RunFailed']]);
      expect(failing.events.at(-1)).toMatchObject({
        error: { code: 'rate_limit_exceeded' },
        usage: [{ inputTokens: 10, outputTokens: 5 }],
      });
    });

    it('records a streamed run whose consumer stopped early as RunFailed aborted, with what it had done', async () => {
      const { run: target, events } = capturingRun();
      const recorder = recordAgentsRun(target);
      const model = new ScriptedModel([
        response([functionCall('get_weather', { city: 'Paris' }, { callId: 'call_1' })], [10, 5]),
        response([assistantMessage('18 degrees.')], [20, 4]),
      ]);
      const streamed = await recorder.record('Weather?', (input) => run(agentWith(model), input, { stream: true }));
      for await (const event of streamed) {
        // The host stops reading once the first round is done.
        if (event.type === 'run_item_stream_event' && event.name === 'tool_output') break;
      }
      await recorder.recorded;
      expect(streamed.cancelled).toBe(true);
      expect(events.at(-1)).toMatchObject({
        type: 'RunFailed',
        error: { code: 'aborted', message: 'the streamed run was cancelled before it completed' },
      });
      expect(steps(events).slice(0, -1)).toEqual([
        ['ToolCallRequested', 0, 0, 'call_1'],
        ['ToolResultReceived', 0, 0, 'call_1'],
      ]);
    });

    it('ends a run once: a second end does nothing', async () => {
      const { run: target, events } = capturingRun();
      const recorder = recordAgentsRun(target);
      await recorder.fail(new Error('first'));
      await recorder.fail(new Error('second'));
      expect(events).toEqual([expect.objectContaining({ type: 'RunFailed', error: { code: 'Error', message: 'first' } })]);
    });
  });

  describe('approvals', () => {
    const asking = () =>
      new ScriptedModel([
        response(
          [
            functionCall('refund', { orderId: 'A-1', amountEur: 120 }, { callId: 'call_refund' }),
            functionCall('get_weather', { city: 'Paris' }, { callId: 'call_w' }),
          ],
          [20, 6],
        ),
      ]);

    it('records the request in the run that asked, which ends with tool_limit; the resuming run records the decision and the output with the ids of the call', async () => {
      const asked = capturingRun('run-ask');
      const agent = agentWith(asking());
      const first = await recordedRun(asked.run, 'Refund A-1', (input) => run(agent, input), {
        approvalReason: (call) => `refund of ${String(call.arguments.amountEur)} EUR`,
      });
      expect(steps(asked.events)).toEqual([
        ['ToolCallRequested', 0, 0, 'call_refund'],
        ['ToolCallRequested', 0, 1, 'call_w'],
        ['ToolResultReceived', 0, 1, 'call_w'],
        ['ToolApprovalRequested', 0, 0, 'call_refund'],
        ['RunCompleted'],
      ]);
      expect(asked.events[3]).toMatchObject({ reason: 'refund of 120 EUR' });
      expect(asked.events.at(-1)).toMatchObject({ finishReason: 'tool_limit', usage: [{ inputTokens: 20, outputTokens: 6 }] });

      // Later, in another request: the state restored from the string the host kept, approved, resumed as a run of its own.
      const resumed = capturingRun('run-resume');
      const resumingAgent = agentWith(new ScriptedModel([response([assistantMessage('Refunded.', { id: 'msg_refunded' })], [40, 3])]));
      const state = await RunState.fromString(resumingAgent, first.state.toString());
      state.approve(state.getInterruptions()[0]);
      await recordedRun(resumed.run, state, (input) => run(resumingAgent, input), { decidedBy: 'desk-3' });
      expect(steps(resumed.events)).toEqual([
        ['ToolApprovalDecided', 0, 0, 'call_refund'],
        ['ToolResultReceived', 0, 0, 'call_refund'],
        ['RunCompleted'],
      ]);
      expect(resumed.events[0]).toMatchObject({ approved: true, decidedBy: 'desk-3' });
      expect(resumed.events[1]).toMatchObject({ result: 'refunded 120 EUR on A-1', isError: false });
      expect(resumed.events[2]).toMatchObject({
        assistantMessageId: 'msg_refunded',
        finishReason: 'stop',
        usage: [{ inputTokens: 40, outputTokens: 3 }],
      });
    });

    it('records a rejection as a decision with its message, and no result', async () => {
      const asked = capturingRun('run-ask');
      const agent = agentWith(asking());
      const first = await recordedRun(asked.run, 'Refund A-1', (input) => run(agent, input));
      first.state.reject(first.interruptions[0], { message: 'Refunds over 100 EUR need a manager.' });
      (agent.model as ScriptedModel).enqueue(response([assistantMessage('I could not refund it.')], [30, 5]));

      const resumed = capturingRun('run-resume');
      await recordedRun(resumed.run, first.state, (input) => run(agent, input));
      expect(steps(resumed.events)).toEqual([['ToolApprovalDecided', 0, 0, 'call_refund'], ['RunCompleted']]);
      expect(resumed.events[0]).toMatchObject({ approved: false, reason: 'Refunds over 100 EUR need a manager.' });
    });
  });
});
