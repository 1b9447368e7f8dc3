import { runCompleted, toolCall, toolResult } from '../../../../test/support/tool-event-factory';
import { expiredResultNotice, ReplayRequest } from './replay-history';

import { derivedToolCallId } from './replayed-tool-call-id';
import { simpleRun } from './replay-runs.fixture';
import { inRun, iso, policyOf, replayOf, T0 } from './replay-test-support.fixture';

const run = inRun;
const replay = replayOf;

describe('replayHistory', () => {
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
