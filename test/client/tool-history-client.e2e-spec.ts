import { modelMessageSchema } from 'ai';
import { logLevel } from 'kafkajs';
import { type AddressInfo, createServer, type Server, type Socket } from 'node:net';
import { z } from 'zod';
import {
  DEFAULT_MAX_EVENT_BYTES,
  InvalidToolEventError,
  OmissionReason,
  type PublishedEvent,
  RunPublisher,
  ToolEventPublisher,
  ToolHistoryClient,
  ToolHistoryError,
  type SubscribedEvent,
  type ToolEvent,
  type ToolResultReceived,
  TRUNCATION_TAIL,
  truncationMarker,
} from '../../libs/client/src';
import { toLangChainMessages } from '../../libs/client/src/langchain';
import { freshTopic, readTopic, testKafka } from '../support/kafka-fixtures';
import { RunningStack, startRunningStack } from '../support/running-stack';
import { uniqueName } from '../support/test-environment';
import { waitFor } from '../support/wait-for';

describe('@toolhistory/client through the real broker and the real gRPC server', () => {
  let stack: RunningStack;
  let publisher: ToolEventPublisher;
  let client: ToolHistoryClient;
  const tenantId = uniqueName('tenant');
  const conversationId = uniqueName('conv');
  const scope = (runId: string) => ({ tenantId, conversationId, channel: 'support', runId });

  /** A completed run of two rounds (two parallel calls, then one, the second with no id from the LLM). */
  async function publishTwoRoundRun(run: RunPublisher): Promise<void> {
    await run.toolCall({ roundIndex: 0, sequenceIndex: 0, toolCallId: 'call_a', toolName: 'get_order', arguments: { orderId: 'A-1' } });
    await run.toolCall({ roundIndex: 0, sequenceIndex: 1, toolCallId: 'call_b', toolName: 'get_customer', arguments: { id: 7 } });
    await run.toolResult({ roundIndex: 0, sequenceIndex: 1, toolCallId: 'call_b', result: { name: 'Ada' } });
    await run.toolResult({ roundIndex: 0, sequenceIndex: 0, toolCallId: 'call_a', result: 'shipped' });
    await run.toolCall({ roundIndex: 1, sequenceIndex: 0, toolCallId: '', toolName: 'track_parcel', arguments: { parcel: 'P9' } });
    await run.toolResult({ roundIndex: 1, sequenceIndex: 0, toolCallId: '', result: 'no carrier answer', isError: true });
    await run.complete({ assistantMessageId: 'msg-1', usage: [{ inputTokens: 10, outputTokens: 5, model: 'm' }] });
  }

  beforeAll(async () => {
    stack = await startRunningStack('client', { policy: { defaults: { freshnessSeconds: 3600 } } });
    publisher = new ToolEventPublisher({ brokers: stack.brokers, topic: stack.topic });
    await publisher.connect();
    client = new ToolHistoryClient({ address: stack.address });
    await publishTwoRoundRun(publisher.run(scope('run-1')));
    await waitFor(
      () => client.getReplayHistory({ tenantId, conversationId, format: 'openai' }),
      (history) => history.turns.length === 1,
      { what: 'run-1 replayed' },
    );
  });

  afterAll(async () => {
    client?.close();
    await publisher?.disconnect();
    await stack?.stop();
  });

  it('replays the run in OpenAI chat format: each round an assistant message of calls, then its tool messages', async () => {
    const history = await client.getReplayHistory({ tenantId, conversationId, format: 'openai' });
    expect(history.omitted).toEqual([]);
    expect(history.turns.map((t) => [t.runId, t.assistantMessageId])).toEqual([['run-1', 'msg-1']]);
    const [first, a, b, second, tracked] = history.messages;
    expect(first).toEqual({
      role: 'assistant',
      content: null,
      tool_calls: [
        { id: 'call_a', type: 'function', function: { name: 'get_order', arguments: '{"orderId":"A-1"}' } },
        { id: 'call_b', type: 'function', function: { name: 'get_customer', arguments: '{"id":7}' } },
      ],
    });
    expect([a, b]).toEqual([
      { role: 'tool', tool_call_id: 'call_a', content: 'shipped' },
      { role: 'tool', tool_call_id: 'call_b', content: '{"name":"Ada"}' },
    ]);
    // The call the LLM gave no id gets the same derived id in both messages.
    const derivedId = second.role === 'assistant' && 'tool_calls' in second ? second.tool_calls[0].id : '';
    expect(derivedId).not.toBe('');
    expect(tracked).toEqual({ role: 'tool', tool_call_id: derivedId, content: 'no carrier answer' });
    expect(history.turns[0].messages).toEqual(history.messages);
  });

  it('replays it in Anthropic messages format: tool_use blocks, then one user message of tool_result blocks', async () => {
    const history = await client.getReplayHistory({ tenantId, conversationId, format: 'anthropic' });
    expect(history.messages.map((m) => m.role)).toEqual(['assistant', 'user', 'assistant', 'user']);
    const results = history.messages[3];
    expect(results.content).toEqual([expect.objectContaining({ type: 'tool_result', content: 'no carrier answer', is_error: true })]);
  });

  it("replays it as the AI SDK's ModelMessage[], which the ai package's own schema accepts", async () => {
    const history = await client.getReplayHistory({ tenantId, conversationId, format: 'ai-sdk' });
    expect(z.array(modelMessageSchema).safeParse(history.messages).success).toBe(true);
    expect(history.messages[0]).toEqual({
      role: 'assistant',
      content: [
        { type: 'tool-call', toolCallId: 'call_a', toolName: 'get_order', input: { orderId: 'A-1' } },
        { type: 'tool-call', toolCallId: 'call_b', toolName: 'get_customer', input: { id: 7 } },
      ],
    });
    expect(history.messages[3]).toEqual({
      role: 'tool',
      content: [
        {
          type: 'tool-result',
          toolCallId: expect.any(String),
          toolName: 'track_parcel',
          output: { type: 'error-text', value: 'no carrier answer' },
        },
      ],
    });
  });

  it("replays it as OpenAI Responses input items, Gemini contents and Bedrock Converse messages, typed as each API's input", async () => {
    const responses = await client.getReplayHistory({ tenantId, conversationId, format: 'openai-responses' });
    expect(responses.messages.slice(0, 4)).toEqual([
      { type: 'function_call', call_id: 'call_a', name: 'get_order', arguments: '{"orderId":"A-1"}' },
      { type: 'function_call', call_id: 'call_b', name: 'get_customer', arguments: '{"id":7}' },
      { type: 'function_call_output', call_id: 'call_a', output: 'shipped' },
      { type: 'function_call_output', call_id: 'call_b', output: '{"name":"Ada"}' },
    ]);
    const tracked = responses.messages[5];
    expect(tracked.type === 'function_call_output' && tracked.output).toBe('[error] no carrier answer');

    const gemini = await client.getReplayHistory({ tenantId, conversationId, format: 'gemini' });
    expect(gemini.messages.map((content) => content.role)).toEqual(['model', 'user', 'model', 'user']);
    const [, answers] = gemini.messages;
    expect(answers.role === 'user' && answers.parts.map((part) => part.functionResponse.response)).toEqual([
      { output: 'shipped' },
      { name: 'Ada' },
    ]);

    const bedrock = await client.getReplayHistory({ tenantId, conversationId, format: 'bedrock-converse' });
    expect(bedrock.messages.map((message) => message.role)).toEqual(['assistant', 'user', 'assistant', 'user']);
    const failed = bedrock.messages[3];
    expect(failed.role === 'user' && failed.content[0].toolResult).toEqual({
      toolUseId: expect.stringMatching(/^[a-zA-Z0-9_-]{1,64}$/),
      content: [{ text: 'no carrier answer' }],
      status: 'error',
    });
  });

  it('asks for only the messages or only the rounds when told: the same turns, half the payload', async () => {
    const all = await client.getReplayHistory({ tenantId, conversationId, format: 'openai' });
    expect(all.turns[0].rounds).toHaveLength(2);
    const messagesOnly = await client.getReplayHistory({ tenantId, conversationId, format: 'openai', view: 'messages' });
    expect(messagesOnly.messages).toEqual(all.messages);
    expect(messagesOnly.turns.map((t) => [t.runId, t.rounds])).toEqual([['run-1', []]]);
    const structured = await client.getReplayHistory({ tenantId, conversationId, format: 'openai', view: 'structured' });
    expect(structured.turns[0].rounds).toEqual(all.turns[0].rounds);
    expect(structured.messages).toEqual([]);
    // toLangChainMessages reads the rounds, which the structured view carries.
    expect(toLangChainMessages(structured)).toEqual(toLangChainMessages(all));
    // ai-sdk messages are made from the rounds: its default view asks for them alone, and "messages" is refused.
    expect((await client.getReplayHistory({ tenantId, conversationId, format: 'ai-sdk' })).messages).toHaveLength(4);
    await expect(client.getReplayHistory({ tenantId, conversationId, format: 'ai-sdk', view: 'messages' })).rejects.toThrow(
      'view: "messages" cannot give ai-sdk messages',
    );
  });

  it('reports the tokens replayed, and keeps within maxHistoryTokens by leaving the oldest rounds out', async () => {
    const all = await client.getReplayHistory({ tenantId, conversationId, format: 'openai' });
    expect(all.historyTokens).toBeGreaterThan(0);
    const none = await client.getReplayHistory({ tenantId, conversationId, format: 'openai', maxHistoryTokens: 0 });
    expect([none.messages, none.historyTokens]).toEqual([[], 0]);
    expect(new Set(none.omitted.map((o) => o.reason))).toEqual(new Set([OmissionReason.OMISSION_REASON_TOKEN_BUDGET]));
    await expect(client.getReplayHistory({ tenantId, conversationId, format: 'openai', maxHistoryTokens: -1 })).rejects.toThrow(
      'maxHistoryTokens: -1 is not a whole number of tokens',
    );
  });

  it('records a run published again (a worker retrying after a crash) once: event ids are derived from the step', async () => {
    const run = publisher.run(scope('run-2'));
    await run.toolCall({ roundIndex: 0, sequenceIndex: 0, toolCallId: 'call_x', toolName: 'get_order', arguments: { orderId: 'B-2' } });
    await run.toolCall({ roundIndex: 0, sequenceIndex: 0, toolCallId: 'call_x', toolName: 'get_order', arguments: { orderId: 'B-2' } });
    const first = await run.toolResult({ roundIndex: 0, sequenceIndex: 0, toolCallId: 'call_x', result: 'returned' });
    const again = await publisher
      .run(scope('run-2'))
      .toolResult({ roundIndex: 0, sequenceIndex: 0, toolCallId: 'call_x', result: 'returned' });
    expect(again.eventId).toBe(first.eventId);
    await run.complete({ assistantMessageId: 'msg-2' });
    await run.complete({ assistantMessageId: 'msg-2' });

    const events: SubscribedEvent[] = [];
    for await (const recorded of client.subscribe({ tenantId })) {
      if (recorded.runId === 'run-2') events.push(recorded);
      if (recorded.runId === 'run-2' && recorded.type === 'RunCompleted') break;
    }
    expect(events.map((e) => e.type)).toEqual(['ToolCallRequested', 'ToolResultReceived', 'RunCompleted']);
    expect(events[1].event).toMatchObject({ type: 'ToolResultReceived', result: 'returned', eventId: first.eventId });
    const invocations = await collect(client.listToolInvocations({ tenantId, runId: 'run-2' }));
    expect(invocations).toHaveLength(1);
  });

  it('rejects an invalid event in the worker, naming the field, and sends nothing', async () => {
    const run = publisher.run(scope('run-bad'));
    const attempt = run.toolCall({ roundIndex: -1, sequenceIndex: 0, toolCallId: 'c', toolName: '', arguments: { a: 1 } });
    await expect(attempt).rejects.toBeInstanceOf(InvalidToolEventError);
    await expect(attempt).rejects.toThrow(/roundIndex must be >= 0.*toolName must NOT have fewer than 1 characters/);
    expect(() => publisher.run({ ...scope('x'), tenantId: '' })).toThrow('tenantId is required');
    const listed = await collect(client.listToolInvocations({ tenantId, runId: 'run-bad' }));
    expect(listed).toEqual([]);
  });

  it("sends a round's calls in one request, and none of them when one is invalid", async () => {
    const other = { tenantId: uniqueName('tenant'), conversationId: uniqueName('conv'), channel: 'web', runId: 'run-batch' };
    const run = publisher.run(other);
    const call = (sequenceIndex: number, toolName = 'get_order') => ({
      roundIndex: 0,
      sequenceIndex,
      toolCallId: `call_${sequenceIndex}`,
      toolName,
      arguments: { n: sequenceIndex },
    });
    await expect(run.toolCalls([{ ...call(5), toolCallId: 'never_sent' }, call(6, '')])).rejects.toThrow(InvalidToolEventError);
    const calls = await run.toolCalls([call(0), call(1), call(2)]);
    expect(new Set(calls.map((c) => c.partition)).size).toBe(1);
    expect(calls.map((c) => BigInt(c.offset) - BigInt(calls[0].offset))).toEqual([0n, 1n, 2n]);
    await run.toolResults([0, 1, 2].map((i) => ({ roundIndex: 0, sequenceIndex: i, toolCallId: `call_${i}`, result: `r${i}` })));
    await run.complete({ assistantMessageId: 'msg-batch' });
    const history = await waitFor(
      () => client.getReplayHistory({ tenantId: other.tenantId, conversationId: other.conversationId, format: 'openai' }),
      (h) => h.turns.length === 1,
      { what: 'the batched run replayed' },
    );
    expect(history.turns[0].rounds[0].calls.map((c) => [c.toolCallId, c.result])).toEqual([
      ['call_0', 'r0'],
      ['call_1', 'r1'],
      ['call_2', 'r2'],
    ]);
    const listed = await collect(client.listToolInvocations({ tenantId: other.tenantId }));
    expect(listed.map((i) => i.toolCallId)).toEqual(['call_0', 'call_1', 'call_2']);
  });

  it('cuts a 3 MB result to fit the event limit instead of failing the turn: the broker gets the cut event, the service replays it', async () => {
    const big = {
      tenantId: uniqueName('tenant'),
      conversationId: uniqueName('conv'),
      channel: 'web',
      runId: 'run-big',
      userMessageId: 'msg-user-big',
    };
    const page = 'All work and no play makes Jack a dull boy. '.repeat(70_000);
    expect(Buffer.byteLength(page)).toBeGreaterThan(3_000_000);
    const step = { roundIndex: 0, sequenceIndex: 0, toolCallId: 'call_page' };
    const publishRun = async (run: RunPublisher) => {
      await run.toolCall({ ...step, toolName: 'fetch_page', arguments: { url: 'https://example.com/long' } });
      const published = await run.toolResult({ ...step, result: page });
      await run.complete({ assistantMessageId: 'msg-big' });
      return published;
    };

    // On a topic of its own, to read back exactly what the publisher sent.
    const kafka = testKafka('client-big-result');
    const { topic } = await freshTopic(kafka, 1);
    const own = new ToolEventPublisher({ brokers: stack.brokers, topic });
    await own.connect();
    let published: PublishedEvent;
    try {
      published = await publishRun(own.run(big));
    } finally {
      await own.disconnect();
    }
    const messages = await readTopic(kafka, topic, 3);
    const sent = messages.find((message) => message.offset === published.offset)!;
    expect(Buffer.byteLength(sent.value!)).toBeLessThanOrEqual(DEFAULT_MAX_EVENT_BYTES);
    const event = JSON.parse(sent.value!) as ToolResultReceived;
    expect(event).toMatchObject({ type: 'ToolResultReceived', eventId: published.eventId, userMessageId: 'msg-user-big', ...step });
    expect(event.originalBytes).toBe(Buffer.byteLength(JSON.stringify(page)));
    const marker = TRUNCATION_TAIL.exec(event.result as string)!;
    const kept = (event.result as string).slice(0, marker.index);
    expect(page.startsWith(kept)).toBe(true);
    expect(marker[0]).toBe(truncationMarker(page.length - kept.length));
    expect(messages.map((message) => (JSON.parse(message.value!) as ToolEvent).userMessageId)).toEqual(Array(3).fill('msg-user-big'));

    // And through the service: recorded and replayed as cut.
    await publishRun(publisher.run(big));
    const history = await waitFor(
      () => client.getReplayHistory({ tenantId: big.tenantId, conversationId: big.conversationId, format: 'openai', view: 'structured' }),
      (h) => h.turns.length === 1,
      { what: 'the run with the cut result replayed' },
    );
    expect(history.turns[0].rounds[0].calls[0].result).toBe(event.result);
  });

  it('lists every invocation page after page, in order', async () => {
    const all = await collect(client.listToolInvocations({ tenantId, conversationId, pageSize: 1 }));
    expect(all.map((i) => `${i.runId}/${i.roundIndex}/${i.sequenceIndex}`)).toEqual(['run-1/0/0', 'run-1/0/1', 'run-1/1/0', 'run-2/0/0']);
    const errors = await collect(client.listToolInvocations({ tenantId, status: 'error' }));
    expect(errors.map((i) => i.toolName)).toEqual(['track_parcel']);
  });

  it('resumes a subscription after the last position seen, without a gap or a duplicate', async () => {
    const firstTwo: SubscribedEvent[] = [];
    for await (const recorded of client.subscribe({ tenantId })) {
      firstTwo.push(recorded);
      if (firstTwo.length === 2) break;
    }
    const rest: SubscribedEvent[] = [];
    const controller = new AbortController();
    for await (const recorded of client.subscribe({ tenantId, fromPosition: firstTwo[1].position, signal: controller.signal })) {
      rest.push(recorded);
      if (recorded.runId === 'run-2' && recorded.type === 'RunCompleted') controller.abort();
    }
    const positions = [...firstTwo, ...rest].map((e) => BigInt(e.position));
    expect(positions).toEqual([...positions].sort((x, y) => (x < y ? -1 : 1)));
    expect(new Set(positions).size).toBe(positions.length);
    expect(rest.map((e) => e.eventId)).not.toContain(firstTwo[1].eventId);
    expect(positions).toHaveLength(7 + 3);
  });

  it('answers usage and search for the tenant', async () => {
    const usage = await client.getUsage({
      tenantId,
      from: new Date(Date.now() - 3_600_000),
      to: new Date(Date.now() + 60_000),
      bucket: 'day',
    });
    expect(usage.rows.find((r) => r.toolName === 'get_order')?.calls).toBe('2');
    expect(usage.inputTokens).toBe('10');
    // Search follows the recording after commit.
    const found = await waitFor(
      () => client.searchToolHistory({ tenantId, query: 'shipped' }),
      (answer) => answer.hits.length > 0,
      { what: 'the search projection to reach the shipped result' },
    );
    expect(found.hits.map((h) => h.invocation?.toolCallId)).toEqual(['call_a']);
  });

  it('turns a refused call into a ToolHistoryError with its gRPC status', async () => {
    const failure = client.getReplayHistory({ tenantId: '', conversationId, format: 'openai' });
    await expect(failure).rejects.toBeInstanceOf(ToolHistoryError);
    await expect(failure).rejects.toMatchObject({ status: 'INVALID_ARGUMENT', code: 3, retriable: false });
    await expect(client.getReplayHistory({ tenantId, conversationId, format: 'cohere' as 'openai' })).rejects.toThrow(/format/);
  });

  describe('against a server that accepts connections and never answers', () => {
    let silent: Server;
    let address: string;
    const sockets = new Set<Socket>();

    beforeAll(async () => {
      silent = createServer((socket) => sockets.add(socket));
      await new Promise<void>((listening) => silent.listen(0, '127.0.0.1', listening));
      address = `127.0.0.1:${(silent.address() as AddressInfo).port}`;
    });

    afterAll(async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise((closed) => silent.close(closed));
    });

    it('gives a call without a deadline the default one', async () => {
      const silentClient = new ToolHistoryClient({ address, defaultTimeoutMs: 300 });
      try {
        await expect(silentClient.getUsage({ tenantId, from: new Date(0), to: new Date() })).rejects.toMatchObject({
          status: 'DEADLINE_EXCEEDED',
          retriable: true,
        });
      } finally {
        silentClient.close();
      }
    });

    it('cancels a call in flight when its signal aborts', async () => {
      const silentClient = new ToolHistoryClient({ address, defaultTimeoutMs: 60_000 });
      try {
        const controller = new AbortController();
        const pending = silentClient.searchToolHistory({ tenantId, query: 'shipped', signal: controller.signal });
        // Let the call start (the token is fetched first), then abort it.
        await new Promise((started) => setImmediate(started));
        controller.abort();
        // grpc-js's own status for a call it cancelled, not the check made before a call starts.
        await expect(pending).rejects.toMatchObject({ status: 'CANCELLED', details: 'Cancelled on client' });
      } finally {
        silentClient.close();
      }
    });
  });

  it('bounds fetching the token by the deadline and the signal', async () => {
    const never = new Promise<string>(() => undefined);
    const slowIdp = new ToolHistoryClient({ address: stack.address, token: () => never, defaultTimeoutMs: 200 });
    try {
      await expect(slowIdp.getReplayHistory({ tenantId, conversationId, format: 'openai' })).rejects.toMatchObject({
        status: 'DEADLINE_EXCEEDED',
      });
      const controller = new AbortController();
      const pending = slowIdp.getReplayHistory({
        tenantId,
        conversationId,
        format: 'openai',
        timeoutMs: 60_000,
        signal: controller.signal,
      });
      controller.abort();
      await expect(pending).rejects.toMatchObject({ status: 'CANCELLED' });
    } finally {
      slowIdp.close();
    }
  });

  it('refuses to send a token in the clear to another machine, and a fractional freshness window', async () => {
    expect(() => new ToolHistoryClient({ address: 'toolhistory.example:50051', token: 't' })).toThrow(/not sent in the clear/);
    new ToolHistoryClient({ address: 'toolhistory.example:50051', token: 't', allowTokenWithoutTls: true }).close();
    new ToolHistoryClient({ address: 'localhost:50051', token: 't' }).close();
    await expect(client.getReplayHistory({ tenantId, conversationId, format: 'openai', freshnessWindowSeconds: 1.5 })).rejects.toThrow(
      'freshnessWindowSeconds: 1.5 is not a whole number of seconds, 0 or more',
    );
  });

  it('gives up publishing after a bounded time when the broker cannot take the event, instead of hanging the turn', async () => {
    const nowhere = new ToolEventPublisher({
      brokers: stack.brokers,
      topic: uniqueName('no-such-topic').replace(/_/g, '-'),
      // kafkajs would log each refused metadata request: expected here.
      logLevel: logLevel.NOTHING,
    });
    await nowhere.connect();
    try {
      // Without the bound, kafkajs's idempotent producer retries forever and this test runs out of time.
      await expect(nowhere.run(scope('run-lost')).complete({ assistantMessageId: 'm' })).rejects.toThrow();
    } finally {
      await nowhere.disconnect();
    }
  }, 90_000);

  it('erases the conversation', async () => {
    const erased = await client.eraseConversation({ tenantId, conversationId });
    expect(erased.erasedInvocations).toBe('4');
    expect((await client.getReplayHistory({ tenantId, conversationId, format: 'openai' })).turns).toEqual([]);
  });
});

async function collect<T>(items: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const item of items) out.push(item);
  return out;
}
