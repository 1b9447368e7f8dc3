/**
 * The loops agents really run, end to end (docs/adr/022-approvals-side-effects-and-resumed-runs.md):
 * events through the real broker into the built service, answers through
 * its gRPC server. A call paused for a person's approval and resumed in a
 * later run, a side-effect call cut off by a failed run, a crashed run's
 * progress spliced into the host's messages, a result cut to fit the event
 * limit, and cross-run pairing whatever the recorder's batches.
 */
import type { Producer } from 'kafkajs';
import {
  OmissionReason,
  RunStatus,
  spliceHistory,
  ToolEventPublisher,
  ToolHistoryClient,
  TRUNCATION_TAIL,
  truncationMarker,
} from '../libs/client/src';
import type { ProviderMessage } from '../libs/domain/src/replay/provider-messages';
import { anthropicProblems, openAiProblems } from '../libs/domain/src/replay/replay-test-support.fixture';
import { ReplayResponse, toolHistoryClient, ToolHistoryTestClient } from './support/grpc-client';
import { connectedProducer, publishEvents, testKafka } from './support/kafka-fixtures';
import { RunningStack, startRunningStack } from './support/running-stack';
import { uniqueName } from './support/test-environment';
import { approvalDecided, approvalRequested, RunScope, runCompleted, runFailed, toolCall, toolResult } from './support/tool-event-factory';
import { waitFor } from './support/wait-for';

/** Event times of the traces published with the factory: seconds after a moment shortly before the file runs, so results are fresh. */
const T0 = Date.now() - 5 * 60_000;
const at = (seconds: number) => new Date(T0 + seconds * 1000).toISOString();

/** A gRPC Timestamp as proto-loader decodes it, as an ISO time. */
const isoOf = (timestamp: { seconds: string; nanos: number } | null) =>
  timestamp === null ? null : new Date(Number(timestamp.seconds) * 1000 + timestamp.nanos / 1e6).toISOString();

const REFUND = {
  roundIndex: 0,
  sequenceIndex: 0,
  toolCallId: 'call_refund',
  toolName: 'refund',
  arguments: { orderId: 'A-1', amount: 120, notify: 'ada@example.com' },
};
const REFUND_KEYS = { roundIndex: 0, sequenceIndex: 0, toolCallId: 'call_refund' };
const REFUND_ARGUMENTS_REDACTED = { orderId: 'A-1', amount: 120, notify: '[REDACTED:email]' };

describe('agent loops through the real broker and the real gRPC server', () => {
  let stack: RunningStack;
  let producer: Producer;
  let grpc: ToolHistoryTestClient;
  let publisher: ToolEventPublisher;
  let client: ToolHistoryClient;
  const tenantId = uniqueName('tenant');

  const scope = (conversationId: string, runId: string, userMessageId: string, channel = 'support'): RunScope => ({
    tenantId,
    conversationId,
    runId,
    channel,
    userMessageId,
  });

  const replay = (conversationId: string, request: Record<string, unknown> = {}) =>
    grpc.getReplayHistory({ tenant_id: tenantId, conversation_id: conversationId, ...request }, { deadline: new Date(Date.now() + 5_000) });

  const invocations = async (conversationId: string, tenant = tenantId) =>
    (await grpc.listToolInvocations({ tenant_id: tenant, conversation_id: conversationId }, { deadline: new Date(Date.now() + 5_000) }))
      .invocations;

  const recordedCount = (conversationId: string) =>
    stack.db.pool.query('SELECT count(*)::int AS n FROM events WHERE conversation_id = $1', [conversationId]).then((r) => r.rows[0].n);

  /** Waits until the service recorded all `count` events of the conversation. */
  const recorded = (conversationId: string, count: number) =>
    waitFor(
      () => recordedCount(conversationId),
      (n) => n === count,
      { what: `${count} events of ${conversationId} recorded` },
    );

  /** Both providers accept the turns' messages: each call answered right after it, in order. */
  const expectValidInBothFormats = async (conversationId: string) => {
    const openai = await replay(conversationId, { format: 'HISTORY_FORMAT_OPENAI_CHAT' });
    const anthropic = await replay(conversationId, { format: 'HISTORY_FORMAT_ANTHROPIC_MESSAGES' });
    const messagesOf = (response: ReplayResponse) => response.turns.flatMap((t) => JSON.parse(t.messages_json) as ProviderMessage[]);
    expect(messagesOf(openai).length).toBeGreaterThan(0);
    expect(openAiProblems(messagesOf(openai))).toEqual([]);
    expect(anthropicProblems(messagesOf(anthropic))).toEqual([]);
    return { openai, anthropic };
  };

  beforeAll(async () => {
    stack = await startRunningStack('loops', {
      policy: {
        defaults: { freshnessSeconds: 3600 },
        channels: { support: { visibility: 'per_run' }, 'long-runs': { visibility: 'per_service_call' } },
        tools: { charge_card: { sideEffects: true }, refund: { maskResult: ['$.card'] } },
      },
    });
    producer = await connectedProducer(testKafka('agent-loops'));
    grpc = toolHistoryClient(Number(stack.address.split(':').at(-1)));
    publisher = new ToolEventPublisher({ brokers: stack.brokers, topic: stack.topic });
    await publisher.connect();
    client = new ToolHistoryClient({ address: stack.address });
  });

  afterAll(async () => {
    client?.close();
    grpc?.close();
    await publisher?.disconnect();
    await producer?.disconnect();
    await stack?.stop();
  });

  it('approved in a later run: pending until the decision, then replayed first in the run that resumed, and audited', async () => {
    const conversationId = uniqueName('conv-approved');
    const run1 = scope(conversationId, 'run-1', 'u-1');
    const run2 = scope(conversationId, 'run-2', 'u-2');

    // Run 1 asks for the refund and stops for a person.
    await publishEvents(producer, stack.topic, [
      toolCall(run1, { ...REFUND, occurredAt: at(1) }),
      approvalRequested(run1, { ...REFUND_KEYS, reason: 'refunds over 100 EUR', occurredAt: at(2) }),
      runCompleted(run1, { assistantMessageId: 'a-1', finishReason: 'tool-calls', occurredAt: at(3) }),
    ]);
    await recorded(conversationId, 3);
    const paused = await replay(conversationId);
    expect(paused.turns).toEqual([]);
    expect(
      paused.pending_approvals.map((p) => ({ ...p, arguments_json: JSON.parse(p.arguments_json), requested_at: isoOf(p.requested_at) })),
    ).toEqual([
      {
        tool_call_id: 'call_refund',
        tool_name: 'refund',
        arguments_json: REFUND_ARGUMENTS_REDACTED,
        run_id: 'run-1',
        requested_at: at(2),
        reason: 'refunds over 100 EUR',
        round_index: 0,
        sequence_index: 0,
        // No model response was recorded for the round: nothing to give back with the call.
        round: null,
      },
    ]);
    expect(paused.omitted.map((o) => [o.run_id, o.round_index, o.sequence_index, o.tool_call_id, o.tool_name, o.reason])).toEqual([
      ['run-1', 0, 0, 'call_refund', 'refund', 'OMISSION_REASON_AWAITING_APPROVAL'],
    ]);
    expect((await invocations(conversationId)).map((i) => [i.run_id, i.tool_name, i.approval, i.status])).toEqual([
      ['run-1', 'refund', 'APPROVAL_STATUS_PENDING', 'INVOCATION_STATUS_PENDING'],
    ]);

    // Run 2 resumes: the decision and the refund's result with the call's keys, then a round of its own.
    await publishEvents(producer, stack.topic, [
      approvalDecided(run2, { ...REFUND_KEYS, approved: true, decidedBy: 'Grace (grace@example.com)', occurredAt: at(10) }),
      toolResult(run2, { ...REFUND_KEYS, result: { refunded: 120 }, occurredAt: at(11) }),
      toolCall(run2, {
        roundIndex: 0,
        sequenceIndex: 0,
        toolCallId: 'call_mail',
        toolName: 'send_mail',
        arguments: { template: 'refund' },
        occurredAt: at(12),
      }),
      toolResult(run2, { roundIndex: 0, sequenceIndex: 0, toolCallId: 'call_mail', result: 'sent', occurredAt: at(13) }),
      runCompleted(run2, { assistantMessageId: 'a-2', finishReason: 'stop', occurredAt: at(14) }),
    ]);
    await recorded(conversationId, 8);
    const resumed = await replay(conversationId);
    expect(resumed.pending_approvals).toEqual([]);
    expect(resumed.omitted).toEqual([]);
    expect(
      resumed.turns.map((t) => ({
        run_id: t.run_id,
        assistant_message_id: t.assistant_message_id,
        after_message_id: t.after_message_id,
        status: t.status,
        rounds: t.rounds.map((r) => ({
          round_index: r.round_index,
          resumed_from_run_id: r.resumed_from_run_id,
          calls: r.calls.map((c) => [c.tool_call_id, c.tool_name, JSON.parse(c.arguments_json), c.result, c.is_error, c.approval]),
        })),
      })),
    ).toEqual([
      {
        run_id: 'run-2',
        assistant_message_id: 'a-2',
        after_message_id: 'u-2',
        status: 'RUN_STATUS_COMPLETED',
        rounds: [
          {
            round_index: 0,
            resumed_from_run_id: 'run-1',
            calls: [['call_refund', 'refund', REFUND_ARGUMENTS_REDACTED, '{"refunded":120}', false, 'APPROVAL_STATUS_APPROVED']],
          },
          {
            round_index: 0,
            resumed_from_run_id: '',
            calls: [['call_mail', 'send_mail', { template: 'refund' }, 'sent', false, 'APPROVAL_STATUS_NONE']],
          },
        ],
      },
    ]);

    const { openai, anthropic } = await expectValidInBothFormats(conversationId);
    expect(JSON.parse(openai.turns[0].messages_json).map((m: { role: string; tool_call_id?: string }) => [m.role, m.tool_call_id])).toEqual(
      [
        ['assistant', undefined],
        ['tool', 'call_refund'],
        ['assistant', undefined],
        ['tool', 'call_mail'],
      ],
    );
    expect(JSON.parse(anthropic.turns[0].messages_json)[1]).toEqual({
      role: 'user',
      content: [{ type: 'tool_result', tool_use_id: 'call_refund', content: '{"refunded":120}', is_error: false }],
    });

    const listed = await invocations(conversationId);
    expect(listed.map((i) => [i.run_id, i.tool_name])).toEqual([
      ['run-1', 'refund'],
      ['run-2', 'send_mail'],
    ]);
    const refund = listed[0];
    expect({
      approval: refund.approval,
      approval_decided_by: refund.approval_decided_by,
      approval_decided_at: isoOf(refund.approval_decided_at),
      approval_request_reason: refund.approval_request_reason,
      approval_decision_reason: refund.approval_decision_reason,
      result_run_id: refund.result_run_id,
      status: refund.status,
      result: refund.result,
    }).toEqual({
      approval: 'APPROVAL_STATUS_APPROVED',
      approval_decided_by: 'Grace ([REDACTED:email])',
      approval_decided_at: at(10),
      approval_request_reason: 'refunds over 100 EUR',
      approval_decision_reason: '',
      result_run_id: 'run-2',
      status: 'INVOCATION_STATUS_SUCCEEDED',
      result: '{"refunded":120}',
    });
    expect(listed[1]).toMatchObject({ approval: 'APPROVAL_STATUS_NONE', result_run_id: '' });
  });

  it('denied in a later run: replayed there with an error result that says so and why', async () => {
    const conversationId = uniqueName('conv-denied');
    const run1 = scope(conversationId, 'run-1', 'u-1');
    const run2 = scope(conversationId, 'run-2', 'u-2');
    await publishEvents(producer, stack.topic, [
      toolCall(run1, { ...REFUND, occurredAt: at(1) }),
      approvalRequested(run1, { ...REFUND_KEYS, reason: 'refunds over 100 EUR', occurredAt: at(2) }),
      runCompleted(run1, { assistantMessageId: 'a-1', finishReason: 'tool-calls', occurredAt: at(3) }),
      approvalDecided(run2, {
        ...REFUND_KEYS,
        approved: false,
        reason: 'already refunded by phone',
        decidedBy: 'desk-3',
        occurredAt: at(10),
      }),
      runCompleted(run2, { assistantMessageId: 'a-2', finishReason: 'stop', occurredAt: at(11) }),
    ]);
    await recorded(conversationId, 5);

    const history = await replay(conversationId);
    expect([history.omitted, history.pending_approvals]).toEqual([[], []]);
    expect(history.turns.map((t) => [t.run_id, t.assistant_message_id, t.after_message_id, t.rounds.length])).toEqual([
      ['run-2', 'a-2', 'u-2', 1],
    ]);
    const [round] = history.turns[0].rounds;
    expect(round.resumed_from_run_id).toBe('run-1');
    expect(round.calls.map((c) => ({ ...c, arguments_json: JSON.parse(c.arguments_json), requested_at: isoOf(c.requested_at) }))).toEqual([
      {
        tool_call_id: 'call_refund',
        tool_name: 'refund',
        arguments_json: REFUND_ARGUMENTS_REDACTED,
        result: '[denied] A person did not approve this refund call, so it did not run. Reason: already refunded by phone',
        is_error: true,
        sequence_index: 0,
        requested_at: at(1),
        completed_at: null,
        expired: false,
        invalidated_by: '',
        interrupted: false,
        approval: 'APPROVAL_STATUS_DENIED',
        compacted_items: 0,
      },
    ]);
    const { anthropic } = await expectValidInBothFormats(conversationId);
    expect(JSON.parse(anthropic.turns[0].messages_json)[1].content).toEqual([
      { type: 'tool_result', tool_use_id: 'call_refund', content: round.calls[0].result, is_error: true },
    ]);
    expect((await invocations(conversationId)).map((i) => [i.run_id, i.approval, i.approval_decision_reason, i.status])).toEqual([
      ['run-1', 'APPROVAL_STATUS_DENIED', 'already refunded by phone', 'INVOCATION_STATUS_PENDING'],
    ]);
  });

  it('side effects: a failed run replays its charge_card call with the interrupted notice, right after its user message', async () => {
    const conversationId = uniqueName('conv-side-effects');
    const run = scope(conversationId, 'run-1', 'u-charge');
    await publishEvents(producer, stack.topic, [
      toolCall(run, {
        roundIndex: 0,
        sequenceIndex: 0,
        toolCallId: 'call_charge',
        toolName: 'charge_card',
        arguments: { amount: 30 },
        occurredAt: at(1),
      }),
      toolCall(run, {
        roundIndex: 0,
        sequenceIndex: 1,
        toolCallId: 'call_order',
        toolName: 'lookup_order',
        arguments: { orderId: 'A-1' },
        occurredAt: at(1),
      }),
      runFailed(run, { occurredAt: at(5) }),
    ]);
    await recorded(conversationId, 3);

    const history = await replay(conversationId);
    expect(history.turns.map((t) => [t.run_id, t.status, t.assistant_message_id, t.after_message_id])).toEqual([
      ['run-1', 'RUN_STATUS_FAILED', '', 'u-charge'],
    ]);
    expect(history.turns[0].rounds.map((r) => [r.round_index, r.resumed_from_run_id])).toEqual([[0, '']]);
    expect(history.turns[0].rounds[0].calls.map((c) => ({ ...c, requested_at: isoOf(c.requested_at) }))).toEqual([
      {
        tool_call_id: 'call_charge',
        tool_name: 'charge_card',
        arguments_json: '{"amount":30}',
        result:
          '[interrupted] This call was interrupted before its result was recorded: it may or may not have taken effect. Check before calling it again.',
        is_error: true,
        sequence_index: 0,
        requested_at: at(1),
        completed_at: null,
        expired: false,
        invalidated_by: '',
        interrupted: true,
        approval: 'APPROVAL_STATUS_NONE',
        compacted_items: 0,
      },
    ]);
    // The same situation for a tool without the rule: the failed run keeps it out.
    expect(history.omitted.map((o) => [o.run_id, o.round_index, o.sequence_index, o.tool_name, o.reason])).toEqual([
      ['run-1', 0, 1, 'lookup_order', 'OMISSION_REASON_RUN_FAILED'],
    ]);
    expect(history.pending_approvals).toEqual([]);
    await expectValidInBothFormats(conversationId);
  });

  it("spliceHistory puts a crashed run's finished rounds right after the user message that started it", async () => {
    const conversationId = uniqueName('conv-crashed');
    const inScope = (runId: string, userMessageId: string) => ({ tenantId, conversationId, channel: 'long-runs', runId, userMessageId });
    // An earlier run that completed with the host's message a-1.
    const first = publisher.run(inScope('run-1', 'u-1'));
    await first.toolCall({
      roundIndex: 0,
      sequenceIndex: 0,
      toolCallId: 'call_order',
      toolName: 'get_order',
      arguments: { orderId: 'A-1' },
    });
    await first.toolResult({ roundIndex: 0, sequenceIndex: 0, toolCallId: 'call_order', result: 'shipped' });
    await first.complete({ assistantMessageId: 'a-1' });
    // The run of u-2 finishes round 0, starts round 1, and the worker crashes.
    const crashed = publisher.run(inScope('run-2', 'u-2'));
    await crashed.toolCall({
      roundIndex: 0,
      sequenceIndex: 0,
      toolCallId: 'call_track',
      toolName: 'track_parcel',
      arguments: { parcel: 'P9' },
    });
    await crashed.toolResult({ roundIndex: 0, sequenceIndex: 0, toolCallId: 'call_track', result: 'in transit' });
    await crashed.toolCall({ roundIndex: 1, sequenceIndex: 0, toolCallId: 'call_eta', toolName: 'get_eta', arguments: { parcel: 'P9' } });
    await crashed.fail({ error: { code: 'worker_crash', message: 'the worker restarted' } });
    await recorded(conversationId, 7);

    const history = await client.getReplayHistory({ tenantId, conversationId, format: 'openai' });
    expect(
      history.turns.map((t) => [t.runId, t.status, t.assistantMessageId, t.afterMessageId, t.rounds.map((r) => r.roundIndex)]),
    ).toEqual([
      ['run-1', RunStatus.RUN_STATUS_COMPLETED, 'a-1', 'u-1', [0]],
      ['run-2', RunStatus.RUN_STATUS_FAILED, '', 'u-2', [0]],
    ]);
    expect(history.omitted.map((o) => [o.runId, o.roundIndex, o.toolCallId, o.reason])).toEqual([
      ['run-2', 1, 'call_eta', OmissionReason.OMISSION_REASON_ORPHAN_CALL],
    ]);

    const host = [
      { id: 'u-1', role: 'user', content: 'Where is order A-1?' },
      { id: 'a-1', role: 'assistant', content: 'It shipped.' },
      { id: 'u-2', role: 'user', content: 'And parcel P9?' },
    ];
    const spliced = spliceHistory(host, history.turns, (m) => m.id);
    const summary = (m: (typeof spliced)[number]) => {
      const message = m as { id?: string; role: string; tool_call_id?: string; tool_calls?: Array<{ id: string }> };
      if (message.id) return message.id;
      return message.role === 'tool' ? `tool:${message.tool_call_id}` : `calls:${message.tool_calls!.map((c) => c.id).join(',')}`;
    };
    expect(spliced.map(summary)).toEqual([
      'u-1',
      'calls:call_order',
      'tool:call_order',
      'a-1',
      'u-2',
      'calls:call_track',
      'tool:call_track',
    ]);
    expect(spliced.slice(5)).toEqual([
      {
        role: 'assistant',
        content: null,
        tool_calls: [{ id: 'call_track', type: 'function', function: { name: 'track_parcel', arguments: '{"parcel":"P9"}' } }],
      },
      { role: 'tool', tool_call_id: 'call_track', content: 'in transit' },
    ]);
  });

  it('records a result the publisher cut to fit with its original size, and bills the tokens of a failed run', async () => {
    const billed = uniqueName('tenant-billed');
    const conversationId = uniqueName('conv-big');
    const inScope = (runId: string) => ({ tenantId: billed, conversationId, channel: 'support', runId, userMessageId: 'u-big' });
    const page = 'All work and no play makes Jack a dull boy. '.repeat(70_000);
    expect(Buffer.byteLength(page)).toBeGreaterThan(3_000_000);
    const from = new Date(Date.now() - 60_000);

    const big = publisher.run(inScope('run-big'));
    const pageArguments = { url: 'https://example.com/long' };
    await big.toolCall({ roundIndex: 0, sequenceIndex: 0, toolCallId: 'call_page', toolName: 'fetch_page', arguments: pageArguments });
    await big.toolResult({ roundIndex: 0, sequenceIndex: 0, toolCallId: 'call_page', result: page });
    await big.complete({ assistantMessageId: 'a-big', usage: [{ inputTokens: 1_000, outputTokens: 40, model: 'model-a' }] });
    const broke = publisher.run(inScope('run-broke'));
    await broke.fail({
      error: { code: 'provider_error', message: 'upstream answered 500' },
      usage: [
        { inputTokens: 300, outputTokens: 7, model: 'model-a' },
        { inputTokens: 200, outputTokens: 0, model: 'model-a' },
      ],
    });
    await waitFor(
      () => stack.db.pool.query('SELECT count(*)::int AS n FROM events WHERE tenant_id = $1', [billed]).then((r) => r.rows[0].n),
      (n) => n === 4,
      { what: 'the big run and the failed run recorded' },
    );

    const listed: Awaited<ReturnType<typeof invocations>> = await invocations(conversationId, billed);
    expect(listed.map((i) => [i.run_id, i.tool_call_id, i.status, i.arguments_original_bytes, i.result_original_bytes])).toEqual([
      [
        'run-big',
        'call_page',
        'INVOCATION_STATUS_SUCCEEDED',
        String(Buffer.byteLength(JSON.stringify(pageArguments))),
        String(Buffer.byteLength(JSON.stringify(page))),
      ],
    ]);
    const stored = listed[0].result;
    const marker = TRUNCATION_TAIL.exec(stored);
    expect(marker).not.toBeNull();
    const kept = stored.slice(0, marker!.index);
    expect(kept.length).toBeGreaterThan(500_000);
    expect(page.startsWith(kept)).toBe(true);
    expect(marker![0]).toBe(truncationMarker(page.length - kept.length));
    expect(Buffer.byteLength(stored)).toBeLessThan(1024 * 1024);

    // Tokens of runs that ended in the period: the completed run's and the failed run's.
    const usage = await client.getUsage({ tenantId: billed, from, to: new Date(Date.now() + 60_000), bucket: 'day' });
    expect([usage.inputTokens, usage.outputTokens]).toEqual(['1500', '47']);
    expect(usage.rows.map((r) => [r.toolName, r.calls, r.errors])).toEqual([['fetch_page', '1', '0']]);
  });

  describe('pairing a later run with the call it answers, whatever the recorder batches', () => {
    const run1Events = (conversationId: string) => {
      const run1 = scope(conversationId, 'run-1', 'u-1');
      return [
        toolCall(run1, { ...REFUND, occurredAt: at(1) }),
        approvalRequested(run1, { ...REFUND_KEYS, reason: 'refunds over 100 EUR', occurredAt: at(2) }),
        runCompleted(run1, { assistantMessageId: 'a-1', finishReason: 'tool-calls', occurredAt: at(3) }),
      ];
    };
    const run2Events = (conversationId: string) => {
      const run2 = scope(conversationId, 'run-2', 'u-2');
      return [
        approvalDecided(run2, { ...REFUND_KEYS, approved: true, decidedBy: 'desk-3', occurredAt: at(10) }),
        // The card number is masked by refund's rule: the result is redacted by its call's tool, recorded in run 1.
        toolResult(run2, { ...REFUND_KEYS, result: { refunded: 120, card: 'visa-0042' }, occurredAt: at(11) }),
        runCompleted(run2, { assistantMessageId: 'a-2', finishReason: 'stop', occurredAt: at(12) }),
      ];
    };
    /** The transaction ids that wrote each run's events: one recorder batch is one transaction. */
    const transactionsByRun = async (conversationId: string) => {
      const { rows } = await stack.db.pool.query<{ run_id: string; xids: string[] }>(
        `SELECT run_id, array_agg(DISTINCT xmin::text) AS xids FROM events WHERE conversation_id = $1 GROUP BY run_id ORDER BY run_id`,
        [conversationId],
      );
      return Object.fromEntries(rows.map((r) => [r.run_id, r.xids]));
    };
    const withoutConversation = (listed: Awaited<ReturnType<typeof invocations>>) =>
      listed.map(({ conversation_id: _conversation, ...rest }) => rest);

    it('gives the same replay and audit when both runs arrive in one batch or in two', async () => {
      const together = uniqueName('conv-one-batch');
      const apart = uniqueName('conv-two-batches');
      await publishEvents(producer, stack.topic, [...run1Events(together), ...run2Events(together)]);
      await publishEvents(producer, stack.topic, run1Events(apart));
      await recorded(apart, 3);
      await publishEvents(producer, stack.topic, run2Events(apart));
      await recorded(together, 6);
      await recorded(apart, 6);

      const oneBatch = await transactionsByRun(together);
      expect(oneBatch['run-1']).toHaveLength(1);
      expect(oneBatch['run-2']).toEqual(oneBatch['run-1']);
      const twoBatches = await transactionsByRun(apart);
      expect(twoBatches['run-2'].filter((xid) => twoBatches['run-1'].includes(xid))).toEqual([]);

      const [a, b] = [await replay(together), await replay(apart)];
      expect(b).toEqual(a);
      expect(
        a.turns.map((t) => [
          t.run_id,
          t.rounds.map((r) => [r.resumed_from_run_id, r.calls.map((c) => [c.tool_call_id, c.result, c.approval])]),
        ]),
      ).toEqual([['run-2', [['run-1', [['call_refund', '{"refunded":120,"card":"[REDACTED:$.card]"}', 'APPROVAL_STATUS_APPROVED']]]]]]);
      expect([a.omitted, a.pending_approvals]).toEqual([[], []]);
      const anthropic = [
        await replay(together, { format: 'HISTORY_FORMAT_ANTHROPIC_MESSAGES' }),
        await replay(apart, { format: 'HISTORY_FORMAT_ANTHROPIC_MESSAGES' }),
      ];
      expect(anthropic[1]).toEqual(anthropic[0]);

      const [listedTogether, listedApart] = [await invocations(together), await invocations(apart)];
      expect(withoutConversation(listedApart)).toEqual(withoutConversation(listedTogether));
      expect(
        listedTogether.map((i) => [i.run_id, i.approval, i.approval_decided_by, i.result_run_id, i.status, i.result_redactions]),
      ).toEqual([['run-1', 'APPROVAL_STATUS_APPROVED', 'desk-3', 'run-2', 'INVOCATION_STATUS_SUCCEEDED', { '$.card': 1 }]]);
    });
  });
});
