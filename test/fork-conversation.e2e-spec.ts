import { status as GrpcStatus } from '@grpc/grpc-js';
import { type PublishedEvent, ToolEventPublisher, ToolHistoryClient, ToolHistoryError } from '../libs/client/src';
import { RunningStack, startRunningStack } from './support/running-stack';
import { eventsInClear } from './support/test-keyring';
import { uniqueName } from './support/test-environment';

async function failure(call: Promise<unknown>): Promise<ToolHistoryError> {
  try {
    await call;
  } catch (error) {
    if (error instanceof ToolHistoryError) return error;
    throw error;
  }
  throw new Error('the call succeeded');
}

/** Every text of the schema's tables that could hold a payload: events and both search tables. */
/** Where a secret rests: the events (their sealed payloads opened with the tests' keys) and the search documents. */
async function textsHolding(stack: RunningStack, secret: string): Promise<string[]> {
  const { rows } = await stack.db.pool.query<{ place: string }>(
    `SELECT 'invocation_substring ' || conversation_id AS place FROM invocation_substring WHERE substring_text LIKE $1
     UNION ALL SELECT 'invocation_search ' || conversation_id FROM invocation_search WHERE document::text LIKE $2`,
    [`%${secret}%`, `%${secret.toLowerCase()}%`],
  );
  const events = (await eventsInClear(stack.db.pool, stack.db.schema)).filter((e) => e.text.includes(secret));
  return [...events.map((e) => `events ${e.conversationId}`), ...rows.map((r) => r.place)].sort();
}

describe('ForkConversation, through the broker and gRPC', () => {
  let stack: RunningStack;
  let publisher: ToolEventPublisher;
  let client: ToolHistoryClient;
  const tenantId = uniqueName('tenant');

  beforeAll(async () => {
    // Info lines kept: the test reads the fork's audit line.
    stack = await startRunningStack('fork', { policy: { defaults: { freshnessSeconds: 3600 } }, env: { LOG_LEVEL: 'info' } });
    publisher = new ToolEventPublisher({ brokers: stack.brokers, topic: stack.topic });
    await publisher.connect();
    client = new ToolHistoryClient({ address: stack.address });
  }, 120_000);

  afterAll(async () => {
    client?.close();
    await publisher?.disconnect();
    await stack?.stop();
  });

  /** A completed run of one call whose result carries `secret`. */
  async function publishRun(conversationId: string, n: number, secret: string): Promise<PublishedEvent> {
    const run = publisher.run({ tenantId, conversationId, channel: 'web', runId: `run-${n}`, userMessageId: `u${n}` });
    await run.toolCall({ roundIndex: 0, sequenceIndex: 0, toolCallId: `call_${n}`, toolName: 'lookup', arguments: { n } });
    await run.toolResult({ roundIndex: 0, sequenceIndex: 0, toolCallId: `call_${n}`, result: { note: secret } });
    return run.complete({ assistantMessageId: `a${n}` });
  }

  async function threeRuns(prefix: string): Promise<{ source: string; secrets: string[] }> {
    const source = uniqueName(prefix);
    const secrets = [1, 2, 3].map((n) => `Secret${n}${source.replace(/[^a-z0-9]/gi, '')}`);
    for (const [i, secret] of secrets.entries()) await publishRun(source, i + 1, secret);
    return { source, secrets };
  }

  it('starts the new conversation with the history up to the message, and nothing after; the source unchanged', async () => {
    const { source } = await threeRuns('src');
    const fork = uniqueName('fork');
    const forked = await client.forkConversation({ tenantId, conversationId: source, upToMessageId: 'a2', newConversationId: fork });
    expect(forked.copiedInvocations).toBe('2');
    expect(forked.consistencyToken).toMatch(/^ct1:p:\d+$/);
    // The audit line: who copied which conversation's payloads into which new one, ids and counts only.
    const audit = stack.service
      .output()
      .split('\n')
      .find((line) => line.includes('conversation forked') && line.includes(fork));
    expect(JSON.parse(audit!)).toMatchObject({
      audit: 'fork',
      tenantId,
      conversationId: source,
      upToMessageId: 'a2',
      newConversationId: fork,
      copiedInvocations: 2,
    });
    expect(audit).not.toContain('Secret');
    const replayed = await client.getReplayHistory({
      tenantId,
      conversationId: fork,
      format: 'openai',
      consistencyToken: forked.consistencyToken,
    });
    expect(replayed.turns.map((t) => [t.runId, t.assistantMessageId])).toEqual([
      ['run-1', 'a1'],
      ['run-2', 'a2'],
    ]);
    const sourceReplay = await client.getReplayHistory({ tenantId, conversationId: source, format: 'openai' });
    expect(sourceReplay.turns.map((t) => t.runId)).toEqual(['run-1', 'run-2', 'run-3']);
    // Same call ids and payloads as the source, and each copy names where it came from.
    const copies = [];
    for await (const invocation of client.listToolInvocations({ tenantId, conversationId: fork })) copies.push(invocation);
    expect(copies.map((i) => [i.toolCallId, i.result, i.forkedFrom?.conversationId])).toEqual([
      ['call_1', expect.stringContaining('Secret1'), source],
      ['call_2', expect.stringContaining('Secret2'), source],
    ]);
    // A read with the fork's token waits for search too.
    const found = await client.searchToolHistory({
      tenantId,
      conversationId: fork,
      query: 'lookup',
      consistencyToken: forked.consistencyToken,
    });
    expect(found.hits).toHaveLength(2);
    // Forking at a user message copies that message's run as well.
    const atUser = await client.forkConversation({
      tenantId,
      conversationId: source,
      upToMessageId: 'u1',
      newConversationId: uniqueName('fork'),
    });
    expect(atUser.copiedInvocations).toBe('1');
  });

  it('answers a repeat with the same fork, refuses an id that holds anything else, and an unknown message', async () => {
    const { source } = await threeRuns('src');
    const fork = uniqueName('fork');
    const request = { tenantId, conversationId: source, upToMessageId: 'a1', newConversationId: fork };
    const first = await client.forkConversation(request);
    const again = await client.forkConversation(request);
    expect(again).toEqual(first);
    const other = await failure(client.forkConversation({ ...request, upToMessageId: 'a2' }));
    expect([other.code, other.details]).toEqual([GrpcStatus.ALREADY_EXISTS, expect.stringContaining('already holds')]);
    const unknown = await failure(
      client.forkConversation({ ...request, upToMessageId: 'no-such-message', newConversationId: uniqueName('fork') }),
    );
    expect([unknown.code, unknown.details]).toEqual([GrpcStatus.NOT_FOUND, expect.stringContaining('no-such-message')]);
    const self = await failure(client.forkConversation({ ...request, newConversationId: source }));
    expect(self.code).toBe(GrpcStatus.INVALID_ARGUMENT);
  });

  it('erasing the source leaves no copy of its payloads in any fork, a fork of a fork included; the forks keep their own runs', async () => {
    const { source, secrets } = await threeRuns('src');
    const fork = uniqueName('fork');
    const forked = await client.forkConversation({ tenantId, conversationId: source, upToMessageId: 'a2', newConversationId: fork });
    const ownSecret = `Own${fork.replace(/[^a-z0-9]/gi, '')}`;
    await publishRun(fork, 9, ownSecret);
    const grandchild = uniqueName('fork');
    await client.forkConversation({ tenantId, conversationId: fork, upToMessageId: 'a9', newConversationId: grandchild });
    await client.searchToolHistory({ tenantId, conversationId: grandchild, query: 'lookup', consistencyToken: forked.consistencyToken });
    expect(await textsHolding(stack, secrets[0])).toContain(`events ${grandchild}`);

    const erased = await client.eraseConversation({ tenantId, conversationId: source });
    expect(Number(erased.erasedEvents)).toBeGreaterThan(9);
    for (const secret of secrets) expect([secret, await textsHolding(stack, secret)]).toEqual([secret, []]);
    // What the fork recorded itself stays, in it and in the grandchild that copied it.
    expect(await textsHolding(stack, ownSecret)).toEqual(expect.arrayContaining([`events ${fork}`, `events ${grandchild}`]));
    for (const conversationId of [fork, grandchild]) {
      const replayed = await client.getReplayHistory({ tenantId, conversationId, format: 'openai' });
      expect([conversationId, replayed.turns.map((t) => t.runId)]).toEqual([conversationId, ['run-9']]);
    }
  });

  it('erasing a fork leaves the source whole', async () => {
    const { source, secrets } = await threeRuns('src');
    const fork = uniqueName('fork');
    await client.forkConversation({ tenantId, conversationId: source, upToMessageId: 'a3', newConversationId: fork });
    await client.eraseConversation({ tenantId, conversationId: fork });
    const replayed = await client.getReplayHistory({ tenantId, conversationId: source, format: 'openai' });
    expect(replayed.turns.map((t) => t.runId)).toEqual(['run-1', 'run-2', 'run-3']);
    for (const secret of secrets) expect(await textsHolding(stack, secret)).toContain(`events ${source}`);
    const refork = await failure(
      client.forkConversation({ tenantId, conversationId: source, upToMessageId: 'a1', newConversationId: fork }),
    );
    expect(refork.code).toBe(GrpcStatus.ALREADY_EXISTS);
  });
});
