import type { JsonObject, ToolEvent } from '@toolhistory/contract';
import { runCompleted, toolCall, toolResult } from '../../../../test/support/tool-event-factory';
import { invalidatedResultNotice, ReplayRequest } from './replay-history';
import { ReplayPolicy } from './replay-policy';
import { anthropicToolUseId, derivedToolCallId } from './replayed-tool-call-id';
import { inRun, iso, policyOf, readModelOf, replayOf, T0 } from './replay-test-support.fixture';

const run = inRun;

/** cancel_order makes earlier get_order results of the same order stale; windows long enough that nothing expires. */
const CANCEL_INVALIDATES_GET = {
  defaults: { freshnessSeconds: 86_400 },
  tools: { cancel_order: { invalidates: [{ tool: 'get_order', match: { '$.orderId': '$.id' } }] } },
};

/** A run of one call answered at start + 1 s, completed at start + 2 s. */
function oneCallRun(
  runId: string,
  start: number,
  toolName: string,
  args: JsonObject,
  fields: { isError?: boolean; toolCallId?: string } = {},
): ToolEvent[] {
  const toolCallId = fields.toolCallId ?? `call_${runId}`;
  return [
    toolCall(run(runId), { roundIndex: 0, sequenceIndex: 0, toolCallId, toolName, arguments: args, occurredAt: iso(start) }),
    toolResult(run(runId), {
      roundIndex: 0,
      sequenceIndex: 0,
      toolCallId,
      result: fields.isError ? 'Error: not found' : { ok: true },
      isError: fields.isError ?? false,
      occurredAt: iso(start + 1),
    }),
    runCompleted(run(runId), { assistantMessageId: `msg_${runId}`, finishReason: 'stop', occurredAt: iso(start + 2) }),
  ];
}

const replay = (events: ToolEvent[], asOfSeconds: number, policy: ReplayPolicy, overrides: Partial<ReplayRequest> = {}) =>
  replayOf(events, { asOf: T0 + asOfSeconds * 1000, ...overrides }, policy);

const replayedCalls = (history: ReturnType<typeof replay>) =>
  history.turns.flatMap((t) => t.rounds.flatMap((r) => r.calls.map((c) => `${t.runId}:${c.toolName}`)));

describe('causal invalidation (`invalidates`)', () => {
  describe('replay (golden)', () => {
    const policy = policyOf(CANCEL_INVALIDATES_GET);
    const getThenCancel = [
      ...oneCallRun('r1', 0, 'get_order', { orderId: 'A-1' }),
      ...oneCallRun('r2', 10, 'get_order', { orderId: 'B-2' }),
      ...oneCallRun('r3', 20, 'cancel_order', { id: 'A-1', reason: 'customer asked' }),
      ...oneCallRun('r4', 30, 'get_order', { orderId: 'A-1' }),
    ];

    it('leaves out an earlier result of the same order from the moment the cancel succeeded, naming the cancel', () => {
      const history = replay(getThenCancel, 60, policy);
      expect(replayedCalls(history)).toEqual(['r2:get_order', 'r3:cancel_order', 'r4:get_order']);
      expect(history.omitted).toEqual([
        {
          runId: 'r1',
          roundIndex: 0,
          sequenceIndex: 0,
          toolCallId: 'call_r1',
          toolName: 'get_order',
          reason: 'invalidated',
          invalidatedBy: 'call_r3',
        },
      ]);
    });

    it('replays it as it was at an as_of before the cancel result was recorded', () => {
      // The cancel was requested at 20 s and answered at 21 s.
      expect(replayedCalls(replay(getThenCancel, 20.5, policy))).toEqual(['r1:get_order', 'r2:get_order']);
      // The cancel's own run is still going until 22 s.
      const reasons = (seconds: number) => replay(getThenCancel, seconds, policy).omitted.map((o) => [o.runId, o.reason]);
      expect(reasons(20.5)).toEqual([['r3', 'run_incomplete']]);
      expect(reasons(21)).toEqual([
        ['r1', 'invalidated'],
        ['r3', 'run_incomplete'],
      ]);
    });

    it('invalidates nothing when the cancel failed', () => {
      const failed = [
        ...oneCallRun('r1', 0, 'get_order', { orderId: 'A-1' }),
        ...oneCallRun('r2', 10, 'cancel_order', { id: 'A-1' }, { isError: true }),
      ];
      const history = replay(failed, 60, policy);
      expect(replayedCalls(history)).toEqual(['r1:get_order', 'r2:cancel_order']);
      expect(history.omitted).toEqual([]);
    });

    it('needs every listed path to be present and equal; a redacted value equals nothing', () => {
      const twoPaths = policyOf({
        defaults: { freshnessSeconds: 86_400 },
        tools: { move_order: { invalidates: [{ tool: 'get_order', match: { '$.orderId': '$.id', '$.warehouse': '$.from' } }] } },
      });
      const events = [
        ...oneCallRun('r1', 0, 'get_order', { orderId: 'A-1', warehouse: 'north' }),
        ...oneCallRun('r2', 5, 'get_order', { orderId: 'A-1', warehouse: 'south' }),
        ...oneCallRun('r3', 6, 'get_order', { orderId: 'A-1' }),
        ...oneCallRun('r4', 7, 'get_order', { orderId: '[REDACTED:email]', warehouse: 'north' }),
        ...oneCallRun('r5', 10, 'move_order', { id: 'A-1', from: 'north', to: 'south' }),
        ...oneCallRun('r6', 20, 'move_order', { id: '[REDACTED:email]', from: 'north', to: 'east' }),
      ];
      const history = replay(events, 60, twoPaths);
      expect(history.omitted.map((o) => [o.runId, o.reason, o.invalidatedBy])).toEqual([['r1', 'invalidated', 'call_r5']]);
    });

    it('compares values as JSON: members in any order, numbers and strings apart', () => {
      const byObject = policyOf({
        defaults: { freshnessSeconds: 86_400 },
        tools: { cancel_order: { invalidates: [{ tool: 'get_order', match: { '$.key': '$.key' } }] } },
      });
      const events = [
        ...oneCallRun('r1', 0, 'get_order', { key: { shop: 'eu', id: 7 } }),
        ...oneCallRun('r2', 1, 'get_order', { key: { shop: 'eu', id: '7' } }),
        ...oneCallRun('r3', 10, 'cancel_order', { key: { id: 7, shop: 'eu' } }),
      ];
      expect(replay(events, 60, byObject).omitted.map((o) => o.runId)).toEqual(['r1']);
    });

    it('keeps a placeholder that names the cancel when stale results are kept as placeholders', () => {
      const history = replay(getThenCancel, 60, policy, { staleResults: 'placeholder' });
      expect(history.omitted).toEqual([]);
      const [first] = history.turns[0].rounds[0].calls;
      expect(first).toMatchObject({
        toolName: 'get_order',
        result: invalidatedResultNotice('get_order', 'cancel_order', 'call_r3'),
        isError: false,
        expired: false,
        invalidatedBy: 'call_r3',
      });
      expect(history.turns[0].messages[1]).toEqual({ role: 'tool', tool_call_id: 'call_r1', content: first.result });
      expect(history.turns.flatMap((t) => t.rounds.flatMap((r) => r.calls)).filter((c) => c.invalidatedBy !== undefined)).toHaveLength(1);
    });

    it('is the reason given for a result that is both invalidated and past its window', () => {
      const shortWindow = policyOf({ ...CANCEL_INVALIDATES_GET, defaults: { freshnessSeconds: 5 } });
      const history = replay(getThenCancel, 22, shortWindow);
      expect(history.omitted.map((o) => [o.runId, o.reason])).toEqual([
        ['r1', 'invalidated'],
        ['r2', 'stale'],
      ]);
    });

    it('names the cancel by the id the requested format replays it with, derived when the LLM gave none', () => {
      for (const toolCallId of ['call.with/odd:chars', '']) {
        const events = [
          ...oneCallRun('r1', 0, 'get_order', { orderId: 'A-1' }),
          ...oneCallRun('r2', 10, 'cancel_order', { id: 'A-1' }, { toolCallId }),
          ...oneCallRun('r3', 20, 'cancel_order', { id: 'A-1' }, { toolCallId: 'call_later' }),
        ];
        const unnamed = readModelOf(events).invocations.find((r) => r.runId === 'r2')!;
        const replayedAs = toolCallId === '' ? derivedToolCallId(unnamed) : toolCallId;
        for (const format of ['openai_chat', 'anthropic_messages'] as const) {
          const history = replay(events, 60, policy, { format });
          const cancel = history.turns.find((t) => t.runId === 'r2')!.rounds[0].calls[0];
          // The earliest successful cancel after the result is the one named; the later one changes nothing.
          expect(history.omitted.map((o) => o.invalidatedBy)).toEqual([cancel.toolCallId]);
          expect(cancel.toolCallId).toBe(format === 'anthropic_messages' ? anthropicToolUseId(replayedAs) : replayedAs);
        }
      }
    });

    it('lets a tool invalidate its own earlier results, never the call itself', () => {
      const selfRule = policyOf({
        defaults: { freshnessSeconds: 86_400 },
        tools: { set_address: { invalidates: [{ tool: 'set_address', match: { '$.customer': '$.customer' } }] } },
      });
      const events = [
        ...oneCallRun('r1', 0, 'set_address', { customer: 'c-9', line: 'Old Road 1' }),
        ...oneCallRun('r2', 10, 'set_address', { customer: 'c-9', line: 'New Street 2' }),
      ];
      const history = replay(events, 60, selfRule);
      expect(replayedCalls(history)).toEqual(['r2:set_address']);
      expect(history.omitted.map((o) => [o.runId, o.reason, o.invalidatedBy])).toEqual([['r1', 'invalidated', 'call_r2']]);
    });

    it('counts a cancel in a run that replay itself hides (failed), since the order was cancelled all the same', () => {
      const events = [
        ...oneCallRun('r1', 0, 'get_order', { orderId: 'A-1' }),
        toolCall(run('r2'), {
          roundIndex: 0,
          sequenceIndex: 0,
          toolCallId: 'call_r2',
          toolName: 'cancel_order',
          arguments: { id: 'A-1' },
          occurredAt: iso(10),
        }),
        toolResult(run('r2'), { roundIndex: 0, sequenceIndex: 0, toolCallId: 'call_r2', result: { cancelled: true }, occurredAt: iso(11) }),
      ];
      const history = replay(events, 60, policy);
      expect(history.omitted.map((o) => [o.runId, o.reason])).toEqual([
        ['r1', 'invalidated'],
        ['r2', 'run_incomplete'],
      ]);
    });
  });
});
