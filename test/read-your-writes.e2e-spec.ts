import { status as GrpcStatus } from '@grpc/grpc-js';
import {
  lastConsistencyToken,
  OmissionReason,
  type PublishedEvent,
  ToolEventPublisher,
  ToolHistoryClient,
  ToolHistoryError,
} from '../libs/client/src';
import { freePort, toolHistoryClient } from './support/grpc-client';
import { RunningStack, startRunningStack } from './support/running-stack';
import { ServiceProcess, spawnService, stopService } from './support/service-harness';
import { uniqueName } from './support/test-environment';
import { waitFor } from './support/wait-for';

/** A second service process on the same topic, group and schema, without the recorder role: it only reads. */
async function startReader(stack: RunningStack, groupId: string): Promise<{ process: ServiceProcess; address: string }> {
  const port = await freePort();
  const process = spawnService({
    topic: stack.topic,
    schema: stack.db.schema,
    groupId,
    env: { SERVICE_ROLES: 'grpc', GRPC_PORT: String(port) },
  });
  const health = toolHistoryClient(port);
  try {
    await waitFor(
      () => health.healthCheck().catch(() => 'DOWN'),
      (s) => s === 'SERVING',
      { what: `reader SERVING (${process.output().slice(-300)})`, timeoutMs: 60_000 },
    );
  } finally {
    health.close();
  }
  return { process, address: `127.0.0.1:${port}` };
}

async function failure(call: Promise<unknown>): Promise<ToolHistoryError> {
  try {
    await call;
  } catch (error) {
    if (error instanceof ToolHistoryError) return error;
    throw error;
  }
  throw new Error('the call succeeded');
}

describe('read-your-writes and the host branch, through the broker and gRPC', () => {
  let stack: RunningStack;
  let groupId: string;
  let reader: { process: ServiceProcess; address: string };
  let publisher: ToolEventPublisher;
  let recorderClient: ToolHistoryClient;
  let readerClient: ToolHistoryClient;
  const tenantId = uniqueName('tenant');

  beforeAll(async () => {
    groupId = uniqueName('g');
    stack = await startRunningStack('ryw', { policy: { defaults: { freshnessSeconds: 3600 } }, groupId });
    reader = await startReader(stack, groupId);
    publisher = new ToolEventPublisher({ brokers: stack.brokers, topic: stack.topic });
    await publisher.connect();
    recorderClient = new ToolHistoryClient({ address: stack.address });
    readerClient = new ToolHistoryClient({ address: reader.address });
  }, 120_000);

  afterAll(async () => {
    recorderClient?.close();
    readerClient?.close();
    await publisher?.disconnect();
    if (reader) await stopService(reader.process);
    await stack?.stop();
  });

  /** One completed run of one call: what a worker publishes for a turn. */
  async function publishRun(conversationId: string, runId: string, messages: { user: string; assistant: string }): Promise<PublishedEvent> {
    const run = publisher.run({ tenantId, conversationId, channel: 'web', runId, userMessageId: messages.user });
    const toolCallId = `call_${runId}`;
    await run.toolCall({ roundIndex: 0, sequenceIndex: 0, toolCallId, toolName: 'get_order', arguments: { runId } });
    await run.toolResult({ roundIndex: 0, sequenceIndex: 0, toolCallId, result: { runId } });
    return run.complete({ assistantMessageId: messages.assistant });
  }

  it('answers a read right after publishing with the run in it, 1,000 times, from the recorder and from a reader without it', async () => {
    const conversations = Array.from({ length: 10 }, () => uniqueName('conv'));
    for (let i = 0; i < 1_000; i++) {
      const conversationId = conversations[i % conversations.length];
      const runId = `run-${i}`;
      const published = await publishRun(conversationId, runId, { user: `u-${i}`, assistant: `a-${i}` });
      expect(published.consistencyToken).toMatch(/^ct1:k:/);
      // The process's own reads pass its last token themselves; the reader gets it explicitly, as a host in another process would.
      const client = i % 2 === 0 ? recorderClient : readerClient;
      const history = await client.getReplayHistory({
        tenantId,
        conversationId,
        format: 'openai',
        ...(i % 2 === 0 ? {} : { consistencyToken: published.consistencyToken }),
      });
      expect(history.turns.map((t) => t.runId)).toContain(runId);
    }
  }, 600_000);

  it('gives listings, search and watches the events too', async () => {
    const conversationId = uniqueName('conv');
    const published = await publishRun(conversationId, 'run-all', { user: 'u', assistant: 'a' });
    const token = published.consistencyToken;
    const listed = [];
    for await (const invocation of readerClient.listToolInvocations({ tenantId, conversationId, consistencyToken: token }))
      listed.push(invocation);
    expect(listed.map((i) => i.toolCallId)).toEqual(['call_run-all']);
    const found = await readerClient.searchToolHistory({ tenantId, conversationId, query: 'run-all', consistencyToken: token });
    expect(found.hits.map((h) => h.invocation?.toolCallId)).toEqual(['call_run-all']);
    const watch = readerClient.watchConversation({ tenantId, conversationId, consistencyToken: token });
    const first = await watch.next();
    await watch.return(undefined);
    expect(first.value?.snapshot?.invocations.map((w) => w.invocation?.toolCallId)).toEqual(['call_run-all']);
  });

  it('refuses a token it cannot honour, naming what is wrong', async () => {
    const conversationId = uniqueName('conv');
    const read = (consistencyToken: string) =>
      readerClient.getReplayHistory({ tenantId, conversationId, format: 'openai', consistencyToken });
    for (const [token, says] of [
      ['not-a-token', 'does not start with'],
      [`ct1:k:other-topic:0:5`, 'other-topic'],
      [`ct1:k:${stack.topic}:99:5`, 'partition 99'],
      [`ct1:k:${stack.topic}:0:-1`, 'offset'],
    ] as const) {
      const error = await failure(read(token));
      expect([token, error.code, error.details]).toEqual([token, GrpcStatus.INVALID_ARGUMENT, expect.stringContaining(says)]);
    }
  });

  it('answers UNAVAILABLE within the deadline, naming the token, while the recorder is stopped; the run once it records again', async () => {
    const conversationId = uniqueName('conv');
    await stopService(stack.service);
    try {
      const published = await publishRun(conversationId, 'run-late', { user: 'u', assistant: 'a' });
      const started = Date.now();
      const error = await failure(
        readerClient.getReplayHistory({
          tenantId,
          conversationId,
          format: 'openai',
          consistencyToken: published.consistencyToken,
          timeoutMs: 1_500,
        }),
      );
      const elapsedMs = Date.now() - started;
      expect(error.code).toBe(GrpcStatus.UNAVAILABLE);
      expect(error.details).toContain(published.consistencyToken);
      expect(error.details).toMatch(/recorded up to offset|nothing of it recorded yet/);
      // Refused by the service before the caller's own deadline: the caller sees why, not DEADLINE_EXCEEDED.
      expect(elapsedMs).toBeLessThan(1_500);
    } finally {
      await stack.restart();
    }
    const history = await readerClient.getReplayHistory({
      tenantId,
      conversationId,
      format: 'openai',
      consistencyToken: lastConsistencyToken({ tenantId, conversationId })!,
      timeoutMs: 30_000,
    });
    expect(history.turns.map((t) => t.runId)).toEqual(['run-late']);
  }, 120_000);

  it('replays only the host branch: a regenerated answer leaves its first run out, an edited message every run after it', async () => {
    const conversationId = uniqueName('conv');
    await publishRun(conversationId, 'first', { user: 'u1', assistant: 'a1' });
    await publishRun(conversationId, 'second', { user: 'u2', assistant: 'a2' });
    await publishRun(conversationId, 'second-regenerated', { user: 'u2', assistant: 'a2-regenerated' });
    await publishRun(conversationId, 'third', { user: 'u3', assistant: 'a3' });
    const regenerated = await recorderClient.getReplayHistory({
      tenantId,
      conversationId,
      format: 'openai',
      branchMessageIds: ['u1', 'a1', 'u2', 'a2-regenerated', 'u3', 'a3'],
    });
    expect(regenerated.turns.map((t) => t.runId)).toEqual(['first', 'second-regenerated', 'third']);
    expect(regenerated.omitted.map((o) => [o.runId, o.reason])).toEqual([['second', OmissionReason.OMISSION_REASON_OFF_BRANCH]]);

    // The person edits u2: the host's path is now u1, a1, u2-edited, and a run for the edit is under way.
    const edited = publisher.run({ tenantId, conversationId, channel: 'web', runId: 'after-edit', userMessageId: 'u2-edited' });
    await edited.toolCall({ roundIndex: 0, sequenceIndex: 0, toolCallId: 'call_edit', toolName: 'get_order', arguments: {} });
    await edited.toolResult({ roundIndex: 0, sequenceIndex: 0, toolCallId: 'call_edit', result: 'ok' });
    const hostMessages = [
      { id: 'u1', role: 'user' },
      { id: 'a1', role: 'assistant' },
      { id: 'u2-edited', role: 'user' },
    ];
    const afterEdit = await recorderClient.getReplayHistory({
      tenantId,
      conversationId,
      format: 'openai',
      branchMessageIds: hostMessages.map((m) => m.id),
    });
    expect(afterEdit.turns.map((t) => t.runId)).toEqual(['first']);
    expect(new Set(afterEdit.omitted.filter((o) => o.reason === OmissionReason.OMISSION_REASON_OFF_BRANCH).map((o) => o.runId))).toEqual(
      new Set(['second', 'second-regenerated', 'third']),
    );
    // splicedHistory passes the host's ids itself: the first run's calls before a1, nothing of the abandoned runs.
    const spliced = await recorderClient.splicedHistory({ tenantId, conversationId, format: 'openai', hostMessages });
    expect(spliced.map((m) => ('id' in m ? m.id : m.role))).toEqual(['u1', 'assistant', 'tool', 'a1', 'u2-edited']);
  });
});
