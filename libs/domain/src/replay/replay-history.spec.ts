import type { ToolEvent } from '@toolhistory/contract';
import { runCompleted, runFailed, toolCall, toolResult } from '../../../../test/support/tool-event-factory';
import { expiredResultNotice, ReplayRequest } from './replay-history';
import { parseReplayPolicy } from './replay-policy';
import { derivedToolCallId } from './replayed-tool-call-id';
import { inRun, iso, policyOf, replayOf, T0 } from './replay-test-support.fixture';

const run = inRun;
const replay = replayOf;

/** A run with one round of one call (lookup_order) answered, then RunCompleted at +3 s. */
function simpleRun(runId: string, start: number, fields: { finishReason?: string; toolName?: string; result?: string } = {}): ToolEvent[] {
  return [
    toolCall(run(runId), {
      roundIndex: 0,
      sequenceIndex: 0,
      toolCallId: `call_${runId}`,
      toolName: fields.toolName ?? 'lookup_order',
      occurredAt: iso(start),
    }),
    toolResult(run(runId), {
      roundIndex: 0,
      sequenceIndex: 0,
      toolCallId: `call_${runId}`,
      result: fields.result ?? 'shipped',
      occurredAt: iso(start + 1),
    }),
    runCompleted(run(runId), {
      finishReason: fields.finishReason ?? 'stop',
      assistantMessageId: `msg_${runId}`,
      occurredAt: iso(start + 3),
    }),
  ];
}

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

  describe('freshness', () => {
    const policy = policyOf({
      defaults: { freshnessSeconds: 300 },
      channels: { web: { freshnessSeconds: 120 } },
      tools: { get_stock_price: { freshnessSeconds: 30 }, get_manual: { freshnessSeconds: 86_400 } },
    });
    const events = [
      ...simpleRun('price', 0, { toolName: 'get_stock_price' }),
      ...simpleRun('order', 10, { toolName: 'lookup_order' }),
      ...simpleRun('manual', 20, { toolName: 'get_manual' }),
    ];
    const kept = (asOfSeconds: number, overrides: Partial<ReplayRequest> = {}) =>
      replay(events, { asOf: T0 + asOfSeconds * 1000, ...overrides }, policy).turns.map((t) => t.runId);

    it('drops a call once its result is older than the tool window, else the channel window, else the default', () => {
      expect(kept(31)).toEqual(['price', 'order', 'manual']);
      expect(kept(32)).toEqual(['order', 'manual']); // price result at +1 s, window 30 s
      expect(kept(132)).toEqual(['manual']); // order result at +11 s, channel window 120 s
      expect(kept(3_000)).toEqual(['manual']);
      const stale = replay(events, { asOf: T0 + 100_000_000 }, policy).omitted; // past every window
      expect(stale.map((o) => [o.toolName, o.reason])).toEqual([
        ['get_stock_price', 'stale'],
        ['lookup_order', 'stale'],
        ['get_manual', 'stale'],
      ]);
    });

    it('uses the default window of 300 s when nothing is configured', () => {
      expect(replay(events, { asOf: T0 + 301_000 }).turns.map((t) => t.runId)).toEqual(['price', 'order', 'manual']);
      expect(replay(events, { asOf: T0 + 302_000 }).turns.map((t) => t.runId)).toEqual(['order', 'manual']);
    });

    it('lets a request replace every window', () => {
      expect(kept(3_000, { freshnessWindowSeconds: 10_000 })).toEqual(['price', 'order', 'manual']);
      expect(kept(31, { freshnessWindowSeconds: 15 })).toEqual(['manual']); // results at +1 s, +11 s, +21 s
    });

    it('can keep a stale call as a pair whose result says it expired', () => {
      const history = replay(events, { asOf: T0 + 60_000, staleResults: 'placeholder' }, policy);
      expect(history.omitted).toEqual([]);
      const price = history.turns[0];
      expect(price.rounds[0].calls[0]).toMatchObject({ expired: true, result: expiredResultNotice('get_stock_price', 30), isError: false });
      expect(price.messages[1]).toEqual({ role: 'tool', tool_call_id: 'call_price', content: expiredResultNotice('get_stock_price', 30) });
      const byChannel = policyOf({ channels: { web: { freshnessSeconds: 5, staleResults: 'placeholder' } } });
      expect(replay(events, {}, byChannel).turns).toHaveLength(3);
    });
  });

  it('never replays a tool whose policy does not persist its payload', () => {
    const policy = policyOf({ tools: { read_medical_record: { persist: 'none' }, charge_card: { persist: 'metadata' } } });
    const events = [
      ...simpleRun('a', 0, { toolName: 'read_medical_record' }),
      ...simpleRun('b', 5, { toolName: 'charge_card' }),
      ...simpleRun('c', 9),
    ];
    const history = replay(events, {}, policy);
    expect(history.turns.map((t) => t.runId)).toEqual(['c']);
    expect(history.omitted.map((o) => [o.toolName, o.reason])).toEqual([
      ['read_medical_record', 'policy_skipped'],
      ['charge_card', 'policy_skipped'],
    ]);
  });

  it('derives the same id for a call without one, in both messages and on every replay', () => {
    const r = run('r');
    const events = [
      toolCall(r, { roundIndex: 0, sequenceIndex: 0, toolCallId: '', occurredAt: iso(0) }),
      toolResult(r, { roundIndex: 0, sequenceIndex: 0, toolCallId: '', occurredAt: iso(1) }),
      runCompleted(r, { occurredAt: iso(2) }),
    ];
    const id = derivedToolCallId({ tenantId: 'acme', conversationId: 'c1', runId: 'r', roundIndex: 0, sequenceIndex: 0 });
    expect(id).toMatch(/^call_[0-9a-f]{26}$/);
    const [first, second] = [replay(events), replay(events)];
    expect(first).toEqual(second);
    const messages = first.turns[0].messages as Array<{ tool_calls?: Array<{ id: string }>; tool_call_id?: string }>;
    expect(messages[0].tool_calls![0].id).toBe(id);
    expect(messages[1].tool_call_id).toBe(id);
    expect(derivedToolCallId({ tenantId: 'acme', conversationId: 'c1', runId: 'r', roundIndex: 0, sequenceIndex: 1 })).not.toBe(id);
  });

  it('orders rounds by roundIndex and calls by sequenceIndex, whatever the arrival order', () => {
    const r = run('r');
    const events = [
      toolResult(r, { roundIndex: 1, sequenceIndex: 1, toolCallId: 'r1s1', occurredAt: iso(9) }),
      toolCall(r, { roundIndex: 1, sequenceIndex: 1, toolCallId: 'r1s1', occurredAt: iso(5) }),
      toolCall(r, { roundIndex: 1, sequenceIndex: 0, toolCallId: 'r1s0', occurredAt: iso(5) }),
      toolCall(r, { roundIndex: 0, sequenceIndex: 0, toolCallId: 'r0s0', occurredAt: iso(0) }),
      toolResult(r, { roundIndex: 0, sequenceIndex: 0, toolCallId: 'r0s0', occurredAt: iso(1) }),
      toolResult(r, { roundIndex: 1, sequenceIndex: 0, toolCallId: 'r1s0', occurredAt: iso(8) }),
      runCompleted(r, { occurredAt: iso(10) }),
    ];
    expect(replay(events).turns[0].rounds.map((x) => x.calls.map((c) => c.toolCallId))).toEqual([['r0s0'], ['r1s0', 'r1s1']]);
  });

  it('orders turns by the first event of each run', () => {
    const events = [...simpleRun('second', 20), ...simpleRun('first', 10), ...simpleRun('third', 30)];
    expect(replay(events).turns.map((t) => t.runId)).toEqual(['first', 'second', 'third']);
  });

  it('answers as the history stood at as_of: later events had not happened', () => {
    const events = simpleRun('r', 0); // call at 0 s, result at 1 s, completed at 3 s
    expect(replay(events, { asOf: T0 + 2_000 }).omitted).toEqual([expect.objectContaining({ reason: 'run_incomplete' })]);
    expect(replay(events, { asOf: T0 + 3_000 }).turns).toHaveLength(1);
    expect(replay(events, { asOf: T0 - 1_000 })).toEqual({ turns: [], omitted: [], pendingApprovals: [], historyTokens: 0 });
  });

  it('treats a call requested after its run ended as never sent', () => {
    const events = [
      ...simpleRun('r', 0),
      toolCall(run('r'), { roundIndex: 1, sequenceIndex: 0, toolCallId: 'late', occurredAt: iso(4) }),
      toolResult(run('r'), { roundIndex: 1, sequenceIndex: 0, toolCallId: 'late', occurredAt: iso(5) }),
    ];
    const history = replay(events);
    expect(history.turns[0].rounds.map((x) => x.roundIndex)).toEqual([0]);
    expect(history.omitted).toEqual([expect.objectContaining({ toolCallId: 'late', reason: 'trailing_unsent' })]);
  });
});

describe('parseReplayPolicy', () => {
  it('accepts the documented shape and fills defaults', () => {
    const policy = policyOf({ channels: { support: { visibility: 'per_service_call' } }, tools: { search: { freshnessSeconds: 60 } } });
    expect(policy.defaults).toEqual({
      freshnessSeconds: 300,
      visibility: 'per_run',
      staleResults: 'drop',
      persist: 'full',
      abandonedAfterSeconds: 600,
    });
    expect(policy.channels.support.visibility).toBe('per_service_call');
  });

  it('names every bad key and value', () => {
    const parsed = parseReplayPolicy({
      defaults: { freshnessSeconds: -5, visibilty: 'per_run' },
      channels: { web: { visibility: 'always' } },
      tools: { search: { freshnessSeconds: '60' }, weather: 'fresh' },
      extra: true,
    });
    expect(parsed.ok).toBe(false);
    if (parsed.ok) return;
    expect(parsed.problems).toEqual([
      'extra: unknown key (expected defaults, channels, tools)',
      'defaults.freshnessSeconds: must be a whole number of seconds, 0 or more',
      'defaults.visibilty: unknown key (allowed here: freshnessSeconds, visibility, staleResults, persist, maxHistoryTokens, abandonedAfterSeconds, maskArguments, maskResult, detectors, maxResultChars)',
      'channels.web.visibility: must be one of per_run, per_service_call',
      'tools.search.freshnessSeconds: must be a whole number of seconds, 0 or more',
      'tools.weather: must be an object',
    ]);
  });
});
