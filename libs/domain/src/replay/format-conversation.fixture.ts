/**
 * One conversation that holds every case a replay format must carry:
 * parallel calls, a JSON result, a text result, an error result, an id the
 * stricter APIs refuse, an empty id and an expiry placeholder. The formats'
 * golden outputs (provider-formats.spec.ts) and the check against the
 * vendors' own types (test/conformance) replay it.
 */
import { runCompleted, toolCall, toolResult } from '../../../../test/support/tool-event-factory';
import type { HistoryFormat, ReplayedTurn } from './replay-history';
import { expiredResultNotice } from './replay-call-rules';
import { derivedToolCallId } from './replayed-tool-call-id';
import { inRun, iso, replayOf, T0 } from './replay-test-support.fixture';
import { DEFAULT_REPLAY_POLICY } from './replay-policy';

const R1 = inRun('r1');

/** The id get_note's call, recorded without one, is replayed with. */
export const EMPTY_ID = derivedToolCallId({ tenantId: 'acme', conversationId: 'c1', runId: 'r1', roundIndex: 0, sequenceIndex: 1 });

export const FORMAT_CONVERSATION = [
  toolCall(R1, {
    roundIndex: 0,
    sequenceIndex: 0,
    toolCallId: 'call_order',
    toolName: 'get_order',
    arguments: { id: 'A-1' },
    occurredAt: iso(1),
  }),
  toolCall(R1, { roundIndex: 0, sequenceIndex: 1, toolCallId: '', toolName: 'get_note', arguments: {}, occurredAt: iso(1) }),
  toolResult(R1, { roundIndex: 0, sequenceIndex: 0, toolCallId: 'call_order', result: { status: 'shipped' }, occurredAt: iso(2) }),
  toolResult(R1, { roundIndex: 0, sequenceIndex: 1, toolCallId: '', result: 'call back tomorrow', occurredAt: iso(2) }),
  toolCall(R1, {
    roundIndex: 1,
    sequenceIndex: 0,
    toolCallId: 'call.charge',
    toolName: 'charge_card',
    arguments: { amount: 30 },
    occurredAt: iso(3),
  }),
  toolResult(R1, {
    roundIndex: 1,
    sequenceIndex: 0,
    toolCallId: 'call.charge',
    result: 'card declined',
    isError: true,
    occurredAt: iso(4),
  }),
  toolCall(R1, { roundIndex: 2, sequenceIndex: 0, toolCallId: 'call_rate', toolName: 'get_rate', arguments: {}, occurredAt: iso(5) }),
  toolResult(R1, { roundIndex: 2, sequenceIndex: 0, toolCallId: 'call_rate', result: 1.08, occurredAt: iso(6) }),
  runCompleted(R1, { occurredAt: iso(7) }),
];

/** The placeholder get_rate's result is replayed as: it expires (window 100 s), the others (window 300 s) are fresh. */
export const EXPIRED_NOTICE = expiredResultNotice('get_rate', 100);

/** The conversation's one turn, replayed in `format` two minutes after it began, keeping expired results as placeholders. */
export function formatConversationTurn(format: HistoryFormat): ReplayedTurn {
  return replayOf(
    FORMAT_CONVERSATION,
    { format, asOf: T0 + 120_000, staleResults: 'placeholder' },
    {
      defaults: { ...DEFAULT_REPLAY_POLICY.defaults, freshnessSeconds: 300, abandonedAfterSeconds: 600 },
      channels: {},
      tools: { get_rate: { freshnessSeconds: 100 } },
    },
  ).turns[0];
}
