import {
  type Invocation,
  type JsonObject,
  type JsonValue,
  OmissionReason,
  PersistMode,
  ToolEventPublisher,
  ToolHistoryClient,
} from '../../libs/client/src';
import { readTopic, testKafka } from '../support/kafka-fixtures';
import { RunningStack, startRunningStack } from '../support/running-stack';
import { uniqueName } from '../support/test-environment';
import { waitFor } from '../support/wait-for';

/**
 * Redaction before publishing: the worker's persist hook runs before the
 * events leave it, so what it removes is never on the topic, and the service
 * records that the producer did it.
 */
describe('the persist hook through the real broker and the real gRPC server', () => {
  const SECRET = 'tok-live-5f1e9a7c';
  const tenantId = uniqueName('tenant');
  const conversationId = uniqueName('conv');
  let stack: RunningStack;
  let publisher: ToolEventPublisher;
  let client: ToolHistoryClient;

  const withoutToken = (payload: unknown) => ({ ...(payload as JsonObject), apiToken: '[removed]' });

  beforeAll(async () => {
    stack = await startRunningStack('persist', { policy: { defaults: { freshnessSeconds: 3600 } } });
    publisher = new ToolEventPublisher({
      brokers: stack.brokers,
      topic: stack.topic,
      persist: { call_api: withoutToken, read_vault: () => 'metadata', unlock_door: () => null },
    });
    await publisher.connect();
    client = new ToolHistoryClient({ address: stack.address });

    const run = publisher.run({ tenantId, conversationId, channel: 'support', runId: 'run-1' });
    const calls: Array<{ toolName: string; arguments: JsonObject; result: JsonValue }> = [
      { toolName: 'call_api', arguments: { endpoint: '/orders', apiToken: SECRET }, result: { status: 200, apiToken: SECRET } },
      { toolName: 'read_vault', arguments: { key: SECRET }, result: `the value is ${SECRET}` },
      { toolName: 'unlock_door', arguments: { code: SECRET }, result: { opened: true, code: SECRET } },
      { toolName: 'get_weather', arguments: { city: 'Oslo' }, result: 'rain' },
    ];
    await run.toolCalls(
      calls.map((call, sequenceIndex) => ({ roundIndex: 0, sequenceIndex, toolCallId: `call_${sequenceIndex}`, ...call })),
    );
    await run.toolResults(
      calls.map((call, sequenceIndex) => ({ roundIndex: 0, sequenceIndex, toolCallId: `call_${sequenceIndex}`, result: call.result })),
    );
    await run.complete({ assistantMessageId: 'msg-1' });
  });

  afterAll(async () => {
    client?.close();
    await publisher?.disconnect();
    await stack?.stop();
  });

  const invocations = async (): Promise<Invocation[]> => {
    const listed: Invocation[] = [];
    for await (const invocation of client.listToolInvocations({ tenantId, conversationId })) listed.push(invocation);
    return listed.sort((a, b) => a.sequenceIndex - b.sequenceIndex);
  };

  it('puts nothing the hook removed on the topic', async () => {
    const messages = await readTopic(testKafka(), stack.topic, 9);
    expect(messages).toHaveLength(9);
    for (const message of messages) expect(message.value).not.toContain(SECRET);
    const events = messages.map((message) => JSON.parse(message.value!) as Record<string, unknown>);
    const byTool = (type: string, sequenceIndex: number) => events.find((e) => e.type === type && e.sequenceIndex === sequenceIndex);
    expect(byTool('ToolCallRequested', 0)).toMatchObject({
      arguments: { endpoint: '/orders', apiToken: '[removed]' },
      producerRedacted: true,
    });
    expect(byTool('ToolResultReceived', 1)).toMatchObject({ result: null, redaction: { persist: 'metadata' }, producerRedacted: true });
    expect(byTool('ToolCallRequested', 2)).toMatchObject({ arguments: {}, redaction: { persist: 'none' }, producerRedacted: true });
    expect(byTool('ToolCallRequested', 3)).not.toHaveProperty('producerRedacted');
  });

  it('lists each invocation with producer_redacted, the persist kept and, for metadata, the sizes', async () => {
    const listed = await waitFor(invocations, (all) => all.length === 4 && all.every((i) => i.completedAt !== undefined), {
      what: 'four answered invocations',
    });
    expect(listed.map((i) => [i.toolName, i.producerRedacted, i.persist])).toEqual([
      ['call_api', true, PersistMode.PERSIST_MODE_FULL],
      ['read_vault', true, PersistMode.PERSIST_MODE_METADATA],
      ['unlock_door', true, PersistMode.PERSIST_MODE_NONE],
      ['get_weather', false, PersistMode.PERSIST_MODE_FULL],
    ]);
    const [api, vault, door] = listed;
    expect(JSON.parse(api.argumentsJson)).toEqual({ endpoint: '/orders', apiToken: '[removed]' });
    expect(JSON.parse(api.result)).toEqual({ status: 200, apiToken: '[removed]' });
    expect(vault.argumentsOriginalBytes).toBe(String(Buffer.byteLength(JSON.stringify({ key: SECRET }))));
    expect(vault.resultOriginalBytes).toBe(String(Buffer.byteLength(JSON.stringify(`the value is ${SECRET}`))));
    expect(door.argumentsOriginalBytes).toBeUndefined();
    expect(door.resultOriginalBytes).toBeUndefined();
    for (const invocation of listed) expect(JSON.stringify(invocation)).not.toContain(SECRET);
  });

  it('replays the redacted call and leaves out the ones whose payload was withheld', async () => {
    // The run's end was published after the results, so it may be recorded a moment after them.
    const history = await waitFor(
      () => client.getReplayHistory({ tenantId, conversationId, format: 'openai' }),
      (replay) => replay.turns.length === 1,
      { what: 'the completed run replayed' },
    );
    expect(history.turns[0].rounds[0].calls.map((call) => [call.toolName, JSON.parse(call.argumentsJson)])).toEqual([
      ['call_api', { endpoint: '/orders', apiToken: '[removed]' }],
      ['get_weather', { city: 'Oslo' }],
    ]);
    expect(history.omitted.map((omission) => [omission.toolName, omission.reason])).toEqual([
      ['read_vault', OmissionReason.OMISSION_REASON_POLICY_SKIPPED],
      ['unlock_door', OmissionReason.OMISSION_REASON_POLICY_SKIPPED],
    ]);
    expect(JSON.stringify(history)).not.toContain(SECRET);
  });
});
