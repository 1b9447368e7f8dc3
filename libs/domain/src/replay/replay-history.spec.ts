import { runCompleted, runFailed, toolCall, toolResult } from '../../../../test/support/tool-event-factory';

import { simpleRun } from './replay-runs.fixture';
import { inRun, iso, policyOf, replayOf } from './replay-test-support.fixture';

const run = inRun;
const replay = replayOf;

describe('replayHistory', () => {
  it('gives provider-ready OpenAI chat messages for a completed run (golden)', () => {
    const events = [
      toolCall(run('r1'), {
        roundIndex: 0,
        sequenceIndex: 0,
        toolCallId: 'call_a',
        toolName: 'git_status',
        arguments: { path: '.' },
        occurredAt: iso(0),
      }),
      toolCall(run('r1'), {
        roundIndex: 0,
        sequenceIndex: 1,
        toolCallId: 'call_b',
        toolName: 'git_log',
        arguments: { n: 2 },
        occurredAt: iso(0),
      }),
      toolResult(run('r1'), { roundIndex: 0, sequenceIndex: 1, toolCallId: 'call_b', result: { commits: ['abc'] }, occurredAt: iso(1) }),
      toolResult(run('r1'), { roundIndex: 0, sequenceIndex: 0, toolCallId: 'call_a', result: 'clean', occurredAt: iso(1) }),
      runCompleted(run('r1'), { assistantMessageId: 'msg-1', finishReason: 'stop', occurredAt: iso(2) }),
    ];
    const history = replay(events);
    expect(history.omitted).toEqual([]);
    expect(history.turns).toHaveLength(1);
    expect(history.turns[0]).toMatchObject({ runId: 'r1', assistantMessageId: 'msg-1', status: 'completed' });
    expect(history.turns[0].messages).toEqual([
      {
        role: 'assistant',
        content: null,
        tool_calls: [
          { id: 'call_a', type: 'function', function: { name: 'git_status', arguments: '{"path":"."}' } },
          { id: 'call_b', type: 'function', function: { name: 'git_log', arguments: '{"n":2}' } },
        ],
      },
      { role: 'tool', tool_call_id: 'call_a', content: 'clean' },
      { role: 'tool', tool_call_id: 'call_b', content: '{"commits":["abc"]}' },
    ]);
  });

  it('gives Anthropic messages: tool_use blocks, then one user message with every tool_result (golden)', () => {
    const events = [
      toolCall(run('r1'), {
        roundIndex: 0,
        sequenceIndex: 0,
        toolCallId: 'toolu_1',
        toolName: 'get_weather',
        arguments: { city: 'Oslo' },
        occurredAt: iso(0),
      }),
      toolCall(run('r1'), {
        roundIndex: 0,
        sequenceIndex: 1,
        toolCallId: 'toolu_2',
        toolName: 'get_time',
        arguments: {},
        occurredAt: iso(0),
      }),
      toolResult(run('r1'), { roundIndex: 0, sequenceIndex: 0, toolCallId: 'toolu_1', result: '4°C', occurredAt: iso(1) }),
      toolResult(run('r1'), {
        roundIndex: 0,
        sequenceIndex: 1,
        toolCallId: 'toolu_2',
        result: 'timeout',
        isError: true,
        occurredAt: iso(1),
      }),
      runCompleted(run('r1'), { assistantMessageId: 'msg-1', occurredAt: iso(2) }),
    ];
    expect(replay(events, { format: 'anthropic_messages' }).turns[0].messages).toEqual([
      {
        role: 'assistant',
        content: [
          { type: 'tool_use', id: 'toolu_1', name: 'get_weather', input: { city: 'Oslo' } },
          { type: 'tool_use', id: 'toolu_2', name: 'get_time', input: {} },
        ],
      },
      {
        role: 'user',
        content: [
          { type: 'tool_result', tool_use_id: 'toolu_1', content: '4°C', is_error: false },
          { type: 'tool_result', tool_use_id: 'toolu_2', content: 'timeout', is_error: true },
        ],
      },
    ]);
  });

  describe('run visibility', () => {
    const trace = [
      ...simpleRun('done', 0),
      runFailed(run('failed'), { occurredAt: iso(13) }),
      ...simpleRun('failed', 10).slice(0, 2),
      ...simpleRun('running', 20).slice(0, 2),
    ];

    it('per_run (default): replays completed runs only; failed and running runs are explained', () => {
      const history = replay(trace);
      expect(history.turns.map((t) => t.runId)).toEqual(['done']);
      expect(history.omitted.map((o) => [o.runId, o.reason])).toEqual([
        ['failed', 'run_failed'],
        ['running', 'run_incomplete'],
      ]);
    });

    it('per_service_call: keeps every round that reached a later service call, whatever the run status', () => {
      const long = run('long');
      const events = [
        toolCall(long, { roundIndex: 0, sequenceIndex: 0, toolCallId: 'c0', occurredAt: iso(0) }),
        toolResult(long, { roundIndex: 0, sequenceIndex: 0, toolCallId: 'c0', occurredAt: iso(1) }),
        toolCall(long, { roundIndex: 1, sequenceIndex: 0, toolCallId: 'c1', occurredAt: iso(2) }),
        toolResult(long, { roundIndex: 1, sequenceIndex: 0, toolCallId: 'c1', occurredAt: iso(3) }),
        toolCall(long, { roundIndex: 2, sequenceIndex: 0, toolCallId: 'c2', occurredAt: iso(4) }),
        toolResult(long, { roundIndex: 2, sequenceIndex: 0, toolCallId: 'c2', occurredAt: iso(5) }),
        runFailed(long, { occurredAt: iso(6) }),
      ];
      const policy = policyOf({ channels: { web: { visibility: 'per_service_call' } } });
      const history = replay(events, {}, policy);
      expect(history.turns).toHaveLength(1);
      expect(history.turns[0]).toMatchObject({ runId: 'long', status: 'failed', assistantMessageId: null });
      expect(history.turns[0].rounds.map((r) => r.roundIndex)).toEqual([0, 1]);
      expect(history.omitted).toEqual([expect.objectContaining({ roundIndex: 2, toolCallId: 'c2', reason: 'trailing_unsent' })]);
      // The same run on a per_run channel is not replayed at all.
      expect(replay(events).omitted.map((o) => o.reason)).toEqual(['run_failed', 'run_failed', 'run_failed']);
    });
  });

  it('drops the last round of a run that ended right after executing tools (trailing results)', () => {
    const r = run('limited');
    const events = [
      toolCall(r, { roundIndex: 0, sequenceIndex: 0, toolCallId: 'a', occurredAt: iso(0) }),
      toolResult(r, { roundIndex: 0, sequenceIndex: 0, toolCallId: 'a', occurredAt: iso(1) }),
      toolCall(r, { roundIndex: 1, sequenceIndex: 0, toolCallId: 'b', occurredAt: iso(2) }),
      toolResult(r, { roundIndex: 1, sequenceIndex: 0, toolCallId: 'b', occurredAt: iso(3) }),
      runCompleted(r, { finishReason: 'tool_limit', occurredAt: iso(4) }),
    ];
    const history = replay(events);
    expect(history.turns[0].rounds.map((x) => x.calls.map((c) => c.toolCallId))).toEqual([['a']]);
    expect(history.omitted).toEqual([expect.objectContaining({ toolCallId: 'b', roundIndex: 1, reason: 'trailing_unsent' })]);
  });

  it('drops calls without results and results without calls; a round left empty disappears', () => {
    const r = run('r');
    const events = [
      toolCall(r, { roundIndex: 0, sequenceIndex: 0, toolCallId: 'answered', occurredAt: iso(0) }),
      toolCall(r, { roundIndex: 0, sequenceIndex: 1, toolCallId: 'unanswered', occurredAt: iso(0) }),
      toolResult(r, { roundIndex: 0, sequenceIndex: 0, toolCallId: 'answered', occurredAt: iso(1) }),
      toolResult(r, { roundIndex: 1, sequenceIndex: 0, toolCallId: 'nobody-asked', occurredAt: iso(2) }),
      toolCall(r, { roundIndex: 2, sequenceIndex: 0, toolCallId: 'also-unanswered', occurredAt: iso(3) }),
      toolCall(r, { roundIndex: 3, sequenceIndex: 0, toolCallId: 'last', occurredAt: iso(4) }),
      toolResult(r, { roundIndex: 3, sequenceIndex: 0, toolCallId: 'last', occurredAt: iso(5) }),
      runCompleted(r, { occurredAt: iso(6) }),
    ];
    const history = replay(events);
    expect(history.turns[0].rounds.map((x) => [x.roundIndex, x.calls.map((c) => c.toolCallId)])).toEqual([
      [0, ['answered']],
      [3, ['last']],
    ]);
    expect(history.omitted.map((o) => [o.toolCallId, o.reason])).toEqual([
      ['unanswered', 'orphan_call'],
      ['nobody-asked', 'orphan_result'],
      ['also-unanswered', 'orphan_call'],
    ]);
  });
});
