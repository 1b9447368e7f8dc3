import { status } from '@grpc/grpc-js';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Kafka, Producer } from 'kafkajs';
import type { ToolEvent } from '../libs/contract/src';
import { assertServiceBuilt } from './support/built-service';
import { freshSchema, FreshSchema } from './support/fresh-schema';
import { freePort, ReplayResponse, toolHistoryClient, ToolHistoryTestClient } from './support/grpc-client';
import { connectedProducer, freshTopic, publishEvents, testKafka } from './support/kafka-fixtures';
import { ServiceProcess, spawnService, stopService } from './support/service-harness';
import { TcpProxy } from './support/tcp-proxy';
import { TEST_DATABASE_URL, uniqueName } from './support/test-environment';
import { approvalRequested, runCompleted, runFailed, toolCall, toolResult } from './support/tool-event-factory';
import { waitFor } from './support/wait-for';
import { o200kTokens } from '../libs/tokenizer/src';
import { anthropicToolUseId, bedrockToolUseId, derivedToolCallId } from '../libs/domain/src/replay/replayed-tool-call-id';
import { bedrockProblems, geminiProblems, responsesProblems } from '../libs/domain/src/replay/replay-test-support.fixture';

const minutesAgo = (m: number, plusSeconds = 0) => new Date(Date.now() - m * 60_000 + plusSeconds * 1000).toISOString();

describe('GetReplayHistory through the real broker and the real gRPC server', () => {
  let kafka: Kafka;
  let producer: Producer;
  let db: FreshSchema;
  let service: ServiceProcess;
  let client: ToolHistoryTestClient;
  let topic: string;
  const tenantId = uniqueName('tenant');
  const conversationId = uniqueName('conv');
  const scope = (runId: string) => ({ tenantId, conversationId, runId, channel: 'support' });

  // Published in this order; times are relative to now so freshness applies.
  const events: ToolEvent[] = [
    // r1: two rounds, completed with a final answer: everything replays.
    toolCall(scope('r1'), {
      roundIndex: 0,
      sequenceIndex: 0,
      toolCallId: 'call_order',
      toolName: 'lookup_order',
      arguments: { orderId: 'A-1' },
      occurredAt: minutesAgo(3),
    }),
    toolCall(scope('r1'), {
      roundIndex: 0,
      sequenceIndex: 1,
      toolCallId: '',
      toolName: 'lookup_customer',
      arguments: { id: 7 },
      occurredAt: minutesAgo(3),
    }),
    toolResult(scope('r1'), { roundIndex: 0, sequenceIndex: 1, toolCallId: '', result: { name: 'Ada' }, occurredAt: minutesAgo(3, 1) }),
    toolResult(scope('r1'), { roundIndex: 0, sequenceIndex: 0, toolCallId: 'call_order', result: 'shipped', occurredAt: minutesAgo(3, 1) }),
    toolCall(scope('r1'), {
      roundIndex: 1,
      sequenceIndex: 0,
      toolCallId: 'call_track',
      toolName: 'track_parcel',
      arguments: { parcel: 'P9' },
      occurredAt: minutesAgo(3, 2),
    }),
    toolResult(scope('r1'), {
      roundIndex: 1,
      sequenceIndex: 0,
      toolCallId: 'call_track',
      result: 'in transit',
      occurredAt: minutesAgo(3, 3),
    }),
    runCompleted(scope('r1'), { assistantMessageId: 'msg-r1', finishReason: 'stop', occurredAt: minutesAgo(3, 4) }),
    // r2: failed: omitted on a per_run channel.
    toolCall(scope('r2'), { roundIndex: 0, sequenceIndex: 0, toolCallId: 'call_r2', occurredAt: minutesAgo(2) }),
    toolResult(scope('r2'), { roundIndex: 0, sequenceIndex: 0, toolCallId: 'call_r2', occurredAt: minutesAgo(2, 1) }),
    runFailed(scope('r2'), { occurredAt: minutesAgo(2, 2) }),
    // r3: an orphan call, a stale price (tool window 60 s), and a trailing round cut by the tool limit.
    toolCall(scope('r3'), {
      roundIndex: 0,
      sequenceIndex: 0,
      toolCallId: 'call_price',
      toolName: 'get_price',
      occurredAt: minutesAgo(1.5),
    }),
    toolCall(scope('r3'), {
      roundIndex: 0,
      sequenceIndex: 1,
      toolCallId: 'call_lost',
      toolName: 'lookup_order',
      occurredAt: minutesAgo(1.5),
    }),
    toolResult(scope('r3'), { roundIndex: 0, sequenceIndex: 0, toolCallId: 'call_price', result: '12.50', occurredAt: minutesAgo(1.5, 1) }),
    toolCall(scope('r3'), {
      roundIndex: 1,
      sequenceIndex: 0,
      toolCallId: 'call_last',
      toolName: 'lookup_order',
      occurredAt: minutesAgo(1, 0),
    }),
    toolResult(scope('r3'), { roundIndex: 1, sequenceIndex: 0, toolCallId: 'call_last', occurredAt: minutesAgo(1, 1) }),
    runCompleted(scope('r3'), { assistantMessageId: 'msg-r3', finishReason: 'tool_limit', occurredAt: minutesAgo(1, 2) }),
  ];

  const replay = (request: Record<string, unknown> = {}) =>
    client.getReplayHistory(
      { tenant_id: tenantId, conversation_id: conversationId, ...request },
      { deadline: new Date(Date.now() + 5_000) },
    );

  beforeAll(async () => {
    assertServiceBuilt();
    kafka = testKafka();
    db = await freshSchema('replay');
    ({ topic } = await freshTopic(kafka, 3));
    producer = await connectedProducer(kafka);
    const policyDir = mkdtempSync(join(tmpdir(), 'toolhistory-policy-'));
    const policyFile = join(policyDir, 'policy.json');
    writeFileSync(
      policyFile,
      JSON.stringify({
        defaults: { freshnessSeconds: 600 },
        channels: { 'long-runs': { visibility: 'per_service_call' } },
        tools: {
          get_price: { freshnessSeconds: 60 },
          cancel_order: { invalidates: [{ tool: 'get_order', match: { '$.orderId': '$.id' } }] },
        },
      }),
    );
    const port = await freePort();
    service = spawnService({
      topic,
      schema: db.schema,
      groupId: uniqueName('g'),
      env: { SERVICE_ROLES: 'recorder,grpc', GRPC_PORT: String(port), POLICY_FILE: policyFile },
    });
    client = toolHistoryClient(port);
    await waitFor(
      () => client.healthCheck().catch(() => 'DOWN'),
      (s) => s === 'SERVING',
      { what: 'health SERVING', timeoutMs: 60_000 },
    );
    await publishEvents(producer, topic, events);
    await waitFor(
      () => db.pool.query('SELECT count(*)::int AS n FROM events').then((r) => r.rows[0].n),
      (n) => n === events.length,
      {
        what: 'all events recorded',
      },
    );
  });

  afterAll(async () => {
    client?.close();
    if (service) await stopService(service);
    await producer.disconnect();
    await db.drop();
  });

  it('answers SERVING on the standard health service, for the server and for ToolHistory', async () => {
    expect(await client.healthCheck('')).toBe('SERVING');
    expect(await client.healthCheck('toolhistory.v1.ToolHistory')).toBe('SERVING');
  });

  it('replays the completed run in OpenAI chat format and explains every call left out', async () => {
    const response = await replay();
    // r3 keeps nothing (stale, orphan, trailing), so it is not a turn; its calls are explained.
    expect(response.turns.map((t) => [t.run_id, t.assistant_message_id, t.status])).toEqual([['r1', 'msg-r1', 'RUN_STATUS_COMPLETED']]);
    const [r1] = response.turns;
    const derivedId = r1.rounds[0].calls[1].tool_call_id;
    expect(derivedId).toMatch(/^call_[0-9a-f]{26}$/);
    expect(JSON.parse(r1.messages_json)).toEqual([
      {
        role: 'assistant',
        content: null,
        tool_calls: [
          { id: 'call_order', type: 'function', function: { name: 'lookup_order', arguments: '{"orderId":"A-1"}' } },
          { id: derivedId, type: 'function', function: { name: 'lookup_customer', arguments: '{"id":7}' } },
        ],
      },
      { role: 'tool', tool_call_id: 'call_order', content: 'shipped' },
      { role: 'tool', tool_call_id: derivedId, content: '{"name":"Ada"}' },
      {
        role: 'assistant',
        content: null,
        tool_calls: [{ id: 'call_track', type: 'function', function: { name: 'track_parcel', arguments: '{"parcel":"P9"}' } }],
      },
      { role: 'tool', tool_call_id: 'call_track', content: 'in transit' },
    ]);
    expect(r1.rounds[0].calls[0]).toMatchObject({
      tool_name: 'lookup_order',
      arguments_json: '{"orderId":"A-1"}',
      result: 'shipped',
      is_error: false,
      sequence_index: 0,
    });
    expect(response.omitted.map((o) => [o.run_id, o.tool_call_id, o.reason])).toEqual([
      ['r2', 'call_r2', 'OMISSION_REASON_RUN_FAILED'],
      ['r3', 'call_price', 'OMISSION_REASON_STALE'],
      ['r3', 'call_lost', 'OMISSION_REASON_ORPHAN_CALL'],
      ['r3', 'call_last', 'OMISSION_REASON_TRAILING_UNSENT'],
    ]);
  });

  it('gives the same ids and bytes on every call, and Anthropic messages on request', async () => {
    const [a, b] = [await replay(), await replay()];
    expect(b).toEqual(a);
    const anthropic = await replay({ format: 'HISTORY_FORMAT_ANTHROPIC_MESSAGES' });
    const messages = JSON.parse(anthropic.turns[0].messages_json);
    expect(messages.map((m: { role: string }) => m.role)).toEqual(['assistant', 'user', 'assistant', 'user']);
    expect(messages[1].content.map((c: { type: string; tool_use_id: string }) => [c.type, c.tool_use_id])).toEqual([
      ['tool_result', 'call_order'],
      ['tool_result', a.turns[0].rounds[0].calls[1].tool_call_id],
    ]);
  });

  it('carries only messages_json, or only the rounds, when the view asks; an unknown view is INVALID_ARGUMENT', async () => {
    const all = await replay();
    const messages = await replay({ view: 'REPLAY_VIEW_MESSAGES' });
    expect(messages.turns.map((t) => [t.run_id, t.rounds, t.messages_json])).toEqual([['r1', [], all.turns[0].messages_json]]);
    const structured = await replay({ view: 'REPLAY_VIEW_STRUCTURED' });
    expect(structured.turns.map((t) => [t.run_id, t.rounds, t.messages_json])).toEqual([['r1', all.turns[0].rounds, '']]);
    expect(messages.omitted).toEqual(all.omitted);
    // Each view is the same bytes on every call (the cached history is mapped once per view).
    expect(await replay({ view: 'REPLAY_VIEW_MESSAGES' })).toEqual(messages);
    expect(await replay()).toEqual(all);
    await expect(replay({ view: 7 })).rejects.toMatchObject({ code: status.INVALID_ARGUMENT, details: expect.stringContaining('view') });
  });

  it('counts the tokens replayed, and over max_history_tokens leaves whole rounds out, oldest first', async () => {
    const all = await replay();
    // r1 as replayed: round 0 (lookup_order, lookup_customer), round 1 (track_parcel); o200k_base, counted when recorded.
    const round0 =
      o200kTokens('lookup_order') +
      o200kTokens('{"orderId":"A-1"}') +
      o200kTokens('shipped') +
      o200kTokens('lookup_customer') +
      o200kTokens('{"id":7}') +
      o200kTokens('{"name":"Ada"}');
    const round1 = o200kTokens('track_parcel') + o200kTokens('{"parcel":"P9"}') + o200kTokens('in transit');
    expect(all.history_tokens).toBe(round0 + round1);

    const limited = await replay({ max_history_tokens: round0 + round1 - 1 });
    expect(limited.turns.map((t) => [t.run_id, t.rounds.map((r) => r.round_index)])).toEqual([['r1', [1]]]);
    expect(limited.history_tokens).toBe(round1);
    expect(
      limited.omitted.filter((o) => o.reason === 'OMISSION_REASON_TOKEN_BUDGET').map((o) => [o.run_id, o.round_index, o.sequence_index]),
    ).toEqual([
      ['r1', 0, 0],
      ['r1', 0, 1],
    ]);
    expect(JSON.parse(limited.turns[0].messages_json)).toEqual(JSON.parse(all.turns[0].messages_json).slice(3));

    const nothing = await replay({ max_history_tokens: 0 });
    expect([nothing.turns, nothing.history_tokens]).toEqual([[], 0]);
    await expect(replay({ max_history_tokens: -1 })).rejects.toMatchObject({
      code: status.INVALID_ARGUMENT,
      details: expect.stringContaining('max_history_tokens'),
    });
  });

  it('applies a request freshness window over the policy, and can keep stale calls as expired placeholders', async () => {
    const strict = await replay({ freshness_window_seconds: 30 });
    expect(strict.turns).toEqual([]);
    const kept = await replay({ freshness_window_seconds: 30, stale_results: 'STALE_RESULT_MODE_PLACEHOLDER' });
    expect(kept.turns.map((t) => t.run_id)).toEqual(['r1', 'r3']);
    expect(kept.turns[1].rounds[0].calls[0]).toMatchObject({ tool_call_id: 'call_price', expired: true });
    expect(kept.turns[1].rounds[0].calls[0].result).toMatch(/expired/);
  });

  it('answers as of a past moment, and uses the channel of the request when given', async () => {
    // 1.5 s before r1 completed: its results exist, its completion does not yet.
    const past = Date.parse(events[6].occurredAt) - 1_500;
    const response: ReplayResponse = await replay({ as_of: { seconds: String(Math.floor(past / 1000)), nanos: 0 } });
    expect(response.turns).toEqual([]);
    expect(response.omitted.map((o) => o.reason)).toContain('OMISSION_REASON_RUN_INCOMPLETE');
    const otherChannel = await replay({ channel: 'no-such-channel' });
    expect(otherChannel.turns.map((t) => t.run_id)).toEqual(['r1']);
    // On a per_service_call channel the failed run is not hidden as a whole: its only round is trailing.
    const longRuns = await replay({ channel: 'long-runs' });
    expect(longRuns.omitted.find((o) => o.run_id === 'r2')?.reason).toBe('OMISSION_REASON_TRAILING_UNSENT');
  });

  it('leaves out a get_order once a cancel of the same order is recorded after it, and replays it as of before the cancel', async () => {
    const orders = uniqueName('orders');
    const inOrders = (runId: string) => ({ tenantId, conversationId: orders, runId, channel: 'support' });
    const get = [
      toolCall(inOrders('r1'), {
        roundIndex: 0,
        sequenceIndex: 0,
        toolCallId: 'call_get',
        toolName: 'get_order',
        arguments: { orderId: 'A-7' },
        occurredAt: minutesAgo(4),
      }),
      toolResult(inOrders('r1'), {
        roundIndex: 0,
        sequenceIndex: 0,
        toolCallId: 'call_get',
        result: { status: 'open' },
        occurredAt: minutesAgo(4, 1),
      }),
      runCompleted(inOrders('r1'), { assistantMessageId: 'msg-o1', finishReason: 'stop', occurredAt: minutesAgo(4, 2) }),
    ];
    const cancel = [
      toolCall(inOrders('r2'), {
        roundIndex: 0,
        sequenceIndex: 0,
        toolCallId: 'call_cancel',
        toolName: 'cancel_order',
        arguments: { id: 'A-7' },
        occurredAt: minutesAgo(2),
      }),
      toolResult(inOrders('r2'), {
        roundIndex: 0,
        sequenceIndex: 0,
        toolCallId: 'call_cancel',
        result: { cancelled: true },
        occurredAt: minutesAgo(2, 1),
      }),
      runCompleted(inOrders('r2'), { assistantMessageId: 'msg-o2', finishReason: 'stop', occurredAt: minutesAgo(2, 2) }),
    ];
    const ofOrders = (request: Record<string, unknown> = {}) => replay({ conversation_id: orders, ...request });
    const replayedTools = (response: ReplayResponse) =>
      response.turns.flatMap((t) => t.rounds.flatMap((r) => r.calls.map((c) => c.tool_name)));

    await publishEvents(producer, topic, get);
    await waitFor(
      () => ofOrders(),
      (r) => r.turns.length === 1,
      { what: 'the get_order replayed' },
    );
    expect((await ofOrders()).omitted).toEqual([]);

    await publishEvents(producer, topic, cancel);
    const after = await waitFor(
      () => ofOrders(),
      (r) => r.turns.length === 1 && r.turns[0].run_id === 'r2',
      { what: 'the cancel recorded and the get_order left out' },
    );
    expect(replayedTools(after)).toEqual(['cancel_order']);
    expect(after.omitted.map((o) => [o.run_id, o.tool_call_id, o.reason, o.invalidated_by])).toEqual([
      ['r1', 'call_get', 'OMISSION_REASON_INVALIDATED', 'call_cancel'],
    ]);

    // Half a second before the cancel's result was recorded: the order was still open, and so it replays.
    const beforeCancel = Date.parse(cancel[1].occurredAt) - 500;
    const past = await ofOrders({ as_of: { seconds: String(Math.floor(beforeCancel / 1000)), nanos: (beforeCancel % 1000) * 1_000_000 } });
    expect(replayedTools(past)).toEqual(['get_order']);
    expect(past.omitted.map((o) => o.reason)).toEqual(['OMISSION_REASON_RUN_INCOMPLETE']);

    const placeholder = await ofOrders({ stale_results: 'STALE_RESULT_MODE_PLACEHOLDER' });
    expect(placeholder.omitted).toEqual([]);
    expect(placeholder.turns[0].rounds[0].calls[0]).toMatchObject({
      tool_call_id: 'call_get',
      invalidated_by: 'call_cancel',
      expired: false,
    });
    expect(placeholder.turns[0].rounds[0].calls[0].result).toMatch(
      /^\[invalidated\] This get_order result was made stale by a later cancel_order call \(call_cancel\)/,
    );
  });

  it('answers an unknown conversation with an empty response', async () => {
    expect(await replay({ conversation_id: 'never-seen' })).toEqual({ turns: [], omitted: [], history_tokens: 0, pending_approvals: [] });
    expect(await replay({ tenant_id: 'another-tenant' })).toEqual({ turns: [], omitted: [], history_tokens: 0, pending_approvals: [] });
  });

  it('rejects a request without tenant_id or conversation_id with INVALID_ARGUMENT naming the field', async () => {
    await expect(replay({ tenant_id: '' })).rejects.toMatchObject({ code: status.INVALID_ARGUMENT, details: 'tenant_id is required' });
    await expect(replay({ conversation_id: '' })).rejects.toMatchObject({
      code: status.INVALID_ARGUMENT,
      details: 'conversation_id is required',
    });
  });

  describe('in the OpenAI Responses, Gemini and Bedrock Converse formats', () => {
    // A conversation of its own: parallel calls with a JSON and a text result and an empty id, an error
    // result whose id Bedrock refuses (so it is mapped), a failed run, and a call waiting for a person.
    const formats = uniqueName('formats');
    const inFormats = (runId: string) => ({ tenantId, conversationId: formats, runId, channel: 'support' });
    const emptyId = derivedToolCallId({ tenantId, conversationId: formats, runId: 'f1', roundIndex: 0, sequenceIndex: 1 });
    const ofFormats = (format: string) => replay({ conversation_id: formats, format });
    /** The omitted calls and the pending approvals, by the ids they are reported with. */
    const explained = (response: ReplayResponse) => ({
      omitted: response.omitted.map((o) => [o.run_id, o.tool_call_id, o.reason]),
      pending: response.pending_approvals.map((p) => [p.run_id, p.tool_call_id, p.tool_name]),
    });
    const explainedWith = (failedId: string, refundId: string) => ({
      omitted: [
        ['f2', failedId, 'OMISSION_REASON_RUN_FAILED'],
        ['f3', refundId, 'OMISSION_REASON_AWAITING_APPROVAL'],
      ],
      pending: [['f3', refundId, 'refund']],
    });

    beforeAll(async () => {
      const f1 = inFormats('f1');
      const recorded = [
        toolCall(f1, {
          roundIndex: 0,
          sequenceIndex: 0,
          toolCallId: 'call_order',
          toolName: 'lookup_order',
          arguments: { orderId: 'A-1' },
          occurredAt: minutesAgo(3),
        }),
        toolCall(f1, {
          roundIndex: 0,
          sequenceIndex: 1,
          toolCallId: '',
          toolName: 'lookup_customer',
          arguments: { id: 7 },
          occurredAt: minutesAgo(3),
        }),
        toolResult(f1, {
          roundIndex: 0,
          sequenceIndex: 0,
          toolCallId: 'call_order',
          result: { status: 'shipped' },
          occurredAt: minutesAgo(3, 1),
        }),
        toolResult(f1, { roundIndex: 0, sequenceIndex: 1, toolCallId: '', result: 'Ada', occurredAt: minutesAgo(3, 1) }),
        toolCall(f1, {
          roundIndex: 1,
          sequenceIndex: 0,
          toolCallId: 'call.charge',
          toolName: 'charge_card',
          arguments: { amount: 30 },
          occurredAt: minutesAgo(3, 2),
        }),
        toolResult(f1, {
          roundIndex: 1,
          sequenceIndex: 0,
          toolCallId: 'call.charge',
          result: 'card declined',
          isError: true,
          occurredAt: minutesAgo(3, 3),
        }),
        runCompleted(f1, { assistantMessageId: 'msg-f1', finishReason: 'stop', occurredAt: minutesAgo(3, 4) }),
        toolCall(inFormats('f2'), { roundIndex: 0, sequenceIndex: 0, toolCallId: 'call.failed', occurredAt: minutesAgo(2) }),
        toolResult(inFormats('f2'), { roundIndex: 0, sequenceIndex: 0, toolCallId: 'call.failed', occurredAt: minutesAgo(2, 1) }),
        runFailed(inFormats('f2'), { occurredAt: minutesAgo(2, 2) }),
        toolCall(inFormats('f3'), {
          roundIndex: 0,
          sequenceIndex: 0,
          toolCallId: 'call.refund',
          toolName: 'refund',
          arguments: { amount: 120 },
          occurredAt: minutesAgo(1),
        }),
        approvalRequested(inFormats('f3'), {
          roundIndex: 0,
          sequenceIndex: 0,
          toolCallId: 'call.refund',
          reason: 'refunds over 100 EUR',
          occurredAt: minutesAgo(1, 1),
        }),
        runCompleted(inFormats('f3'), { assistantMessageId: 'msg-f3', finishReason: 'tool-calls', occurredAt: minutesAgo(1, 2) }),
      ];
      await publishEvents(producer, topic, recorded);
      await waitFor(
        () => ofFormats('HISTORY_FORMAT_OPENAI_CHAT'),
        (r) => r.pending_approvals.length === 1 && r.omitted.length === 2,
        { what: 'the formats conversation recorded' },
      );
    });

    it('HISTORY_FORMAT_OPENAI_RESPONSES: function_call items, then their function_call_output items, per round; ids as recorded', async () => {
      const response = await ofFormats('HISTORY_FORMAT_OPENAI_RESPONSES');
      expect(response.turns.map((t) => [t.run_id, t.assistant_message_id])).toEqual([['f1', 'msg-f1']]);
      const items = JSON.parse(response.turns[0].messages_json);
      expect(items).toEqual([
        { type: 'function_call', call_id: 'call_order', name: 'lookup_order', arguments: '{"orderId":"A-1"}' },
        { type: 'function_call', call_id: emptyId, name: 'lookup_customer', arguments: '{"id":7}' },
        { type: 'function_call_output', call_id: 'call_order', output: '{"status":"shipped"}' },
        { type: 'function_call_output', call_id: emptyId, output: 'Ada' },
        { type: 'function_call', call_id: 'call.charge', name: 'charge_card', arguments: '{"amount":30}' },
        { type: 'function_call_output', call_id: 'call.charge', output: '[error] card declined' },
      ]);
      expect(responsesProblems(items)).toEqual([]);
      expect(response.turns[0].rounds.map((r) => r.calls.map((c) => c.tool_call_id))).toEqual([['call_order', emptyId], ['call.charge']]);
      expect(explained(response)).toEqual(explainedWith('call.failed', 'call.refund'));
    });

    it('HISTORY_FORMAT_GEMINI: a model content of functionCall parts, then a user content of functionResponse parts; ids as recorded', async () => {
      const response = await ofFormats('HISTORY_FORMAT_GEMINI');
      expect(response.turns.map((t) => t.run_id)).toEqual(['f1']);
      const contents = JSON.parse(response.turns[0].messages_json);
      expect(contents).toEqual([
        {
          role: 'model',
          parts: [
            { functionCall: { id: 'call_order', name: 'lookup_order', args: { orderId: 'A-1' } } },
            { functionCall: { id: emptyId, name: 'lookup_customer', args: { id: 7 } } },
          ],
        },
        {
          role: 'user',
          parts: [
            { functionResponse: { id: 'call_order', name: 'lookup_order', response: { status: 'shipped' } } },
            { functionResponse: { id: emptyId, name: 'lookup_customer', response: { output: 'Ada' } } },
          ],
        },
        { role: 'model', parts: [{ functionCall: { id: 'call.charge', name: 'charge_card', args: { amount: 30 } } }] },
        { role: 'user', parts: [{ functionResponse: { id: 'call.charge', name: 'charge_card', response: { error: 'card declined' } } }] },
      ]);
      expect(geminiProblems(contents)).toEqual([]);
      expect(explained(response)).toEqual(explainedWith('call.failed', 'call.refund'));
    });

    it('HISTORY_FORMAT_BEDROCK_CONVERSE: toolUse blocks, then toolResult blocks; ids Bedrock refuses mapped everywhere they are reported', async () => {
      const response = await ofFormats('HISTORY_FORMAT_BEDROCK_CONVERSE');
      expect(response.turns.map((t) => t.run_id)).toEqual(['f1']);
      const [chargeId, failedId, refundId] = ['call.charge', 'call.failed', 'call.refund'].map(bedrockToolUseId);
      for (const id of [chargeId, failedId, refundId]) expect(id).toMatch(/^tooluse_[0-9a-f]{26}$/);
      const messages = JSON.parse(response.turns[0].messages_json);
      expect(messages).toEqual([
        {
          role: 'assistant',
          content: [
            { toolUse: { toolUseId: 'call_order', name: 'lookup_order', input: { orderId: 'A-1' } } },
            { toolUse: { toolUseId: emptyId, name: 'lookup_customer', input: { id: 7 } } },
          ],
        },
        {
          role: 'user',
          content: [
            { toolResult: { toolUseId: 'call_order', content: [{ json: { status: 'shipped' } }], status: 'success' } },
            { toolResult: { toolUseId: emptyId, content: [{ text: 'Ada' }], status: 'success' } },
          ],
        },
        { role: 'assistant', content: [{ toolUse: { toolUseId: chargeId, name: 'charge_card', input: { amount: 30 } } }] },
        { role: 'user', content: [{ toolResult: { toolUseId: chargeId, content: [{ text: 'card declined' }], status: 'error' } }] },
      ]);
      expect(bedrockProblems(messages)).toEqual([]);
      // The structured rounds, the omissions and the pending approval speak of the same ids as the messages.
      expect(response.turns[0].rounds.map((r) => r.calls.map((c) => c.tool_call_id))).toEqual([['call_order', emptyId], [chargeId]]);
      expect(explained(response)).toEqual(explainedWith(failedId, refundId));
      // As Anthropic's are: the same mapping rule, a different prefix.
      const anthropic = await ofFormats('HISTORY_FORMAT_ANTHROPIC_MESSAGES');
      expect(explained(anthropic)).toEqual(explainedWith(anthropicToolUseId('call.failed'), anthropicToolUseId('call.refund')));
      // Every call is reported by one id per format, on every replay.
      expect(await ofFormats('HISTORY_FORMAT_BEDROCK_CONVERSE')).toEqual(response);
    });
  });
});

describe('GetReplayHistory while PostgreSQL is unreachable', () => {
  it('answers UNAVAILABLE within the deadline, and health turns NOT_SERVING', async () => {
    assertServiceBuilt();
    const kafka = testKafka();
    const db = await freshSchema('replaydown');
    const { topic } = await freshTopic(kafka, 1);
    const target = new URL(TEST_DATABASE_URL);
    const proxy = new TcpProxy(target.hostname, Number(target.port || 5432));
    await proxy.start();
    const viaProxy = new URL(TEST_DATABASE_URL);
    viaProxy.port = String(proxy.port);
    const port = await freePort();
    const service = spawnService({
      topic,
      schema: db.schema,
      groupId: uniqueName('g'),
      databaseUrl: viaProxy.toString(),
      env: { SERVICE_ROLES: 'grpc', GRPC_PORT: String(port) },
    });
    const client = toolHistoryClient(port);
    try {
      await waitFor(
        () => client.healthCheck().catch(() => 'DOWN'),
        (s) => s === 'SERVING',
        { what: 'health SERVING', timeoutMs: 60_000 },
      );
      await proxy.cut();
      const started = Date.now();
      await expect(
        client.getReplayHistory({ tenant_id: 't', conversation_id: 'c' }, { deadline: new Date(Date.now() + 1_000) }),
      ).rejects.toMatchObject({ code: status.UNAVAILABLE });
      expect(Date.now() - started).toBeLessThan(1_000);
      await waitFor(
        () => client.healthCheck().catch(() => 'DOWN'),
        (s) => s === 'NOT_SERVING',
        { what: 'health NOT_SERVING' },
      );
      await proxy.restore();
      await waitFor(
        () => client.healthCheck().catch(() => 'DOWN'),
        (s) => s === 'SERVING',
        { what: 'health SERVING again' },
      );
      expect(await client.getReplayHistory({ tenant_id: 't', conversation_id: 'c' })).toEqual({
        turns: [],
        omitted: [],
        history_tokens: 0,
        pending_approvals: [],
      });
    } finally {
      client.close();
      await stopService(service);
      await proxy.cut();
      await db.drop();
    }
  });
});

describe('health while Kafka is unreachable', () => {
  it('answers NOT_SERVING, and replay still answers from PostgreSQL', async () => {
    assertServiceBuilt();
    const db = await freshSchema('replaynokafka');
    const port = await freePort();
    const closedPort = await freePort(); // nothing listens there
    const service = spawnService({
      topic: 'unused',
      schema: db.schema,
      groupId: uniqueName('g'),
      env: { SERVICE_ROLES: 'grpc', GRPC_PORT: String(port), KAFKA_BROKERS: `127.0.0.1:${closedPort}`, LOG_LEVEL: 'info' },
    });
    const client = toolHistoryClient(port);
    try {
      await waitFor(
        async () => service.output(),
        (out) => out.includes('toolhistory started'),
        { what: 'start-up' },
      );
      expect(await client.healthCheck()).toBe('NOT_SERVING');
      expect(await client.healthCheck('toolhistory.v1.ToolHistory')).toBe('NOT_SERVING');
      expect(await client.getReplayHistory({ tenant_id: 't', conversation_id: 'c' })).toEqual({
        turns: [],
        omitted: [],
        history_tokens: 0,
        pending_approvals: [],
      });
    } finally {
      client.close();
      await stopService(service);
      await db.drop();
    }
  });
});
