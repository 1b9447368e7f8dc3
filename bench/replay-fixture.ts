import type { ToolEvent } from '../libs/contract/src';

/** The replay benchmarks' conversation and the other conversations they seed beside it. */
export const BENCH_TENANT = 'bench-tenant';
export const BENCH_CONVERSATION = 'bench-conversation';
const TENANT = BENCH_TENANT;
const CONVERSATION = BENCH_CONVERSATION;

/**
 * `turns` completed runs of 2 rounds x 2 calls (results ~1 KB): the first
 * `staleTurns` an hour old (past the default 300 s window), the others
 * within the last 240 s.
 */
export function benchConversation(turns: number, staleTurns: number): ToolEvent[] {
  const events: ToolEvent[] = [];
  let n = 0;
  const id = () => `00000000-0000-4000-8000-${(n++).toString(16).padStart(12, '0')}`.replace(/^0{8}/, Date.now().toString(16).slice(-8));
  const body = 'order A-1001 shipped via DHL, parcel in transit, expected delivery Tuesday. '.repeat(13);
  const freshTurns = turns - staleTurns;
  // Fresh runs end a minute ago at the latest and start at most 240 s ago, so they stay fresh through a run.
  const freshSpacing = Math.min(5_000, Math.floor(180_000 / Math.max(1, freshTurns)));
  for (let r = 0; r < turns; r += 1) {
    const base = r < staleTurns ? Date.now() - 3_600_000 + r * 5_000 : Date.now() - 60_000 - (turns - 1 - r) * freshSpacing;
    const at = (s: number) => new Date(base + s * 1_000).toISOString();
    const envelope = { schemaVersion: 2, tenantId: TENANT, conversationId: CONVERSATION, channel: 'web', runId: `run-${r}` };
    for (let round = 0; round < 2; round += 1) {
      for (let s = 0; s < 2; s += 1)
        events.push({
          ...envelope,
          eventId: id(),
          type: 'ToolCallRequested',
          occurredAt: at(round * 2),
          roundIndex: round,
          sequenceIndex: s,
          toolCallId: `call_${r}_${round}_${s}`,
          toolName: 'lookup_order',
          arguments: { orderId: `A-${r}${round}${s}` },
        });
      for (let s = 0; s < 2; s += 1)
        events.push({
          ...envelope,
          eventId: id(),
          type: 'ToolResultReceived',
          occurredAt: at(round * 2 + 1),
          roundIndex: round,
          sequenceIndex: s,
          toolCallId: `call_${r}_${round}_${s}`,
          result: { summary: body },
          isError: false,
        });
    }
    events.push({
      ...envelope,
      eventId: id(),
      type: 'RunCompleted',
      occurredAt: at(4),
      assistantMessageId: `msg-${r}`,
      finishReason: 'stop',
    });
  }
  return events;
}

/** Other conversations' invocations, written straight into the read model (a seeding shortcut). */
export const SEED_SQL = `
  INSERT INTO conversations (tenant_id, conversation_id, channel, first_event_at, last_event_at)
  SELECT 'seed-tenant-' || (c % 50), 'seed-conv-' || c, 'web', now() - interval '2 days', now() - interval '1 day'
  FROM generate_series(0, $1::int / 20) c;
  INSERT INTO runs (tenant_id, conversation_id, run_id, channel, status, started_at, last_event_at, ended_at, assistant_message_id, finish_reason)
  SELECT 'seed-tenant-' || (c % 50), 'seed-conv-' || c, 'run-' || r, 'web', 'completed', now() - interval '2 days', now() - interval '2 days', now() - interval '2 days', 'msg', 'stop'
  FROM generate_series(0, $1::int / 20) c, generate_series(0, 4) r;
  INSERT INTO invocations (tenant_id, conversation_id, run_id, pair_key, round_index, sequence_index, tool_call_id, tool_name,
                           arguments, result, is_error, requested_at, completed_at, call_event_id, result_event_id)
  SELECT 'seed-tenant-' || (i / 20 % 50), 'seed-conv-' || (i / 20), 'run-' || (i % 20 / 4), 'id:call_' || i, i % 4 / 2, i % 2, 'call_' || i, 'lookup_order',
         jsonb_build_object('orderId', 'A-' || i),
         jsonb_build_object('summary', repeat(md5(i::text), 30)),
         false, now() - interval '2 days', now() - interval '2 days', gen_random_uuid(), gen_random_uuid()
  FROM generate_series(0, $1::int - 1) i;`;
