import { status } from '@grpc/grpc-js';
import type { Producer } from 'kafkajs';
import { assertServiceBuilt } from './support/built-service';
import { freshSchema, FreshSchema } from './support/fresh-schema';
import { ConversationChangeMessage, freePort, toolHistoryClient, ToolHistoryTestClient } from './support/grpc-client';
import { connectedProducer, freshTopic, publishEvents, testKafka } from './support/kafka-fixtures';
import { ServiceProcess, spawnService, stopService } from './support/service-harness';
import { uniqueName } from './support/test-environment';
import { issueToken, type SigningKey, signingKey, TEST_AUDIENCE, TEST_ISSUER, writeKeySet } from './support/test-tokens';
import { runCompleted, toolCall, toolResult } from './support/tool-event-factory';
import { waitFor } from './support/wait-for';
import { ToolHistoryClient, ToolHistoryError } from '../libs/client/src';

interface GrpcError {
  code?: number;
  details?: string;
}

/** One WatchConversation call: every message it received, and how it ended (if it did). */
class Watch {
  readonly messages: ConversationChangeMessage[] = [];
  ended: { code: number; details: string } | 'end' | null = null;
  private readonly call: ReturnType<ToolHistoryTestClient['watchConversation']>;

  constructor(client: ToolHistoryTestClient, tenantId: string, conversationId: string) {
    this.call = client.watchConversation({ tenant_id: tenantId, conversation_id: conversationId });
    this.call.on('data', (message: ConversationChangeMessage) => this.messages.push(message));
    this.call.on('error', (error: GrpcError) => (this.ended = { code: error.code ?? -1, details: error.details ?? '' }));
    this.call.on('end', () => (this.ended ??= 'end'));
  }

  get snapshotComplete(): boolean {
    return this.messages.some((m) => m.change === 'snapshot' && m.snapshot.complete);
  }

  snapshot() {
    return this.messages.filter((m) => m.change === 'snapshot').flatMap((m) => m.snapshot.invocations);
  }

  changes() {
    return this.messages.filter((m) => m.change !== 'snapshot');
  }

  async ready(): Promise<this> {
    await waitFor(
      async () => this,
      (w) => w.snapshotComplete || w.ended !== null,
      { what: 'the snapshot', timeoutMs: 20_000 },
    );
    return this;
  }

  async until<T>(find: (watch: Watch) => T | undefined, what: string): Promise<T> {
    const found = await waitFor(
      async () => find(this),
      (v) => v !== undefined || this.ended !== null,
      { what, timeoutMs: 20_000 },
    );
    if (found === undefined) throw new Error(`${what}: the watch ended first (${JSON.stringify(this.ended)})`);
    return found;
  }

  async endedWith(): Promise<{ code: number; details: string } | 'end'> {
    return waitFor(
      async () => this.ended,
      (e) => e !== null,
      { what: 'the watch to end', timeoutMs: 20_000 },
    ) as Promise<{ code: number; details: string } | 'end'>;
  }

  cancel(): void {
    this.call.cancel();
  }
}

describe('WatchConversation: a UI follows one conversation over gRPC', () => {
  let producer: Producer;
  let db: FreshSchema;
  let topic: string;
  let service: ServiceProcess;
  let port: number;
  let key: SigningKey;
  const clients: ToolHistoryTestClient[] = [];
  const watches: Watch[] = [];
  let acme: string;
  let reader: ToolHistoryTestClient;
  const globex = uniqueName('globex');

  const clientWith = async (claims: Record<string, unknown>) => {
    const client = toolHistoryClient(port, { token: await issueToken(key, claims) });
    clients.push(client);
    return client;
  };
  const watch = (client: ToolHistoryTestClient, tenantId: string, conversationId: string) => {
    const opened = new Watch(client, tenantId, conversationId);
    watches.push(opened);
    return opened;
  };

  beforeAll(async () => {
    assertServiceBuilt();
    key = await signingKey('ES256');
    db = await freshSchema('watch');
    const kafka = testKafka();
    ({ topic } = await freshTopic(kafka, 3));
    producer = await connectedProducer(kafka);
    port = await freePort();
    service = spawnService({
      topic,
      schema: db.schema,
      groupId: uniqueName('g'),
      env: {
        SERVICE_ROLES: 'recorder,grpc',
        GRPC_PORT: String(port),
        AUTH_JWKS_FILE: writeKeySet([key]),
        AUTH_ISSUER: TEST_ISSUER,
        AUTH_AUDIENCE: TEST_AUDIENCE,
        MAX_SUBSCRIPTIONS_PER_TENANT: '3',
      },
    });
    const probe = await clientWith({ tenants: [globex], scope: 'history:read' });
    await waitFor(
      () => probe.healthCheck().catch(() => 'DOWN'),
      (s) => s === 'SERVING',
      { what: 'health SERVING', timeoutMs: 60_000 },
    );
  });

  // A tenant per test: the watches one test leaves open count against its own tenant's bound only.
  beforeEach(async () => {
    acme = uniqueName('acme');
    reader = await clientWith({ tenants: [acme], scope: 'history:read' });
  });

  afterEach(() => {
    for (const w of watches.splice(0)) w.cancel();
  });

  afterAll(async () => {
    for (const c of clients) c.close();
    if (service) await stopService(service);
    await producer?.disconnect();
    await db?.drop();
  });

  it('sends the invocations as they stand, then the pending call, its result and the run ending', async () => {
    const conversationId = uniqueName('conv');
    const r1 = { tenantId: acme, conversationId, runId: 'r1' };
    const r2 = { tenantId: acme, conversationId, runId: 'r2' };
    await publishEvents(producer, topic, [
      toolCall(r1, { roundIndex: 0, sequenceIndex: 0, toolCallId: 'c1', toolName: 'lookup_order' }),
      toolResult(r1, { roundIndex: 0, sequenceIndex: 0, toolCallId: 'c1', result: 'shipped' }),
      runCompleted(r1),
    ]);
    const audit = await clientWith({ tenants: [acme], scope: 'audit:read' });
    const listed = await waitFor(
      () => audit.listToolInvocations({ tenant_id: acme, conversation_id: conversationId }),
      (page) => page.invocations.length === 1,
      { what: 'the first run recorded' },
    );

    // A token with only history:read may watch.
    const w = await watch(reader, acme, conversationId).ready();
    expect(w.ended).toBeNull();
    expect(w.snapshot()).toEqual([{ invocation: listed.invocations[0], run_status: 'RUN_STATUS_COMPLETED' }]);

    await publishEvents(producer, topic, [toolCall(r2, { roundIndex: 0, sequenceIndex: 0, toolCallId: 'c2', toolName: 'refund' })]);
    const pending = await w.until(
      (x) => x.changes().find((m) => m.invocation_changed?.event_type === 'ToolCallRequested'),
      'the pending call',
    );
    expect(pending.invocation_changed.invocation).toMatchObject({
      invocation: { tool_call_id: 'c2', tool_name: 'refund', status: 'INVOCATION_STATUS_PENDING', result: '' },
      run_status: 'RUN_STATUS_RUNNING',
    });

    await publishEvents(producer, topic, [toolResult(r2, { roundIndex: 0, sequenceIndex: 0, toolCallId: 'c2', result: 'refunded' })]);
    const result = await w.until((x) => x.changes().find((m) => m.invocation_changed?.event_type === 'ToolResultReceived'), 'the result');
    expect(result.invocation_changed.invocation.invocation).toMatchObject({
      tool_call_id: 'c2',
      status: 'INVOCATION_STATUS_SUCCEEDED',
      result: 'refunded',
    });

    const end = runCompleted(r2);
    await publishEvents(producer, topic, [end]);
    const ended = await w.until((x) => x.changes().find((m) => m.change === 'run_ended'), 'the run ending');
    expect(ended.run_ended).toMatchObject({ run_id: 'r2', status: 'RUN_STATUS_COMPLETED' });
    expect(new Date(Number(ended.run_ended.ended_at.seconds) * 1000).toISOString().slice(0, 19)).toBe(end.occurredAt.slice(0, 19));

    // Each change once, in the order of the events.
    const positions = w.changes().map((m) => BigInt(m.invocation_changed?.position ?? m.run_ended.position));
    expect(positions).toHaveLength(3);
    expect([...positions].sort((a, b) => (a < b ? -1 : 1))).toEqual(positions);
    expect(new Set(positions).size).toBe(3);
  });

  it('answers an unknown conversation with one empty snapshot, then its changes as they come', async () => {
    const conversationId = uniqueName('conv-new');
    const w = await watch(reader, acme, conversationId).ready();
    expect(w.messages).toEqual([{ change: 'snapshot', snapshot: { invocations: [], complete: true } }]);
    await publishEvents(producer, topic, [toolCall({ tenantId: acme, conversationId, runId: 'r1' }, { roundIndex: 0, sequenceIndex: 0 })]);
    const call = await w.until((x) => x.changes()[0], 'the first call');
    expect(call.invocation_changed).toMatchObject({ event_type: 'ToolCallRequested', invocation: { run_status: 'RUN_STATUS_RUNNING' } });
  });

  it('never loses nor repeats an event that lands while the snapshot is read', async () => {
    const conversationId = uniqueName('conv-busy');
    const scope = { tenantId: acme, conversationId, runId: 'r1' };
    const CALLS = 40;
    const watchesOpened: Watch[] = [];
    for (let i = 0; i < CALLS; i += 1) {
      const call = toolCall(scope, { roundIndex: i, sequenceIndex: 0, toolCallId: `c${i}` });
      const result = toolResult(scope, { roundIndex: i, sequenceIndex: 0, toolCallId: `c${i}` });
      // Published without waiting for the recorder: watches open while events are being recorded.
      await publishEvents(producer, topic, [call]);
      if (i % 14 === 0) watchesOpened.push(watch(reader, acme, conversationId));
      await publishEvents(producer, topic, [result]);
    }
    for (const w of watchesOpened) {
      await w.until((x) => (seenResults(x) === CALLS ? true : undefined), 'every result');
      // Each call once: in the snapshot or as its change, never both.
      const snapshotCalls = w.snapshot().map((s) => s.invocation.tool_call_id);
      const changedCalls = w
        .changes()
        .filter((m) => m.invocation_changed?.event_type === 'ToolCallRequested')
        .map((m) => m.invocation_changed.invocation.invocation.tool_call_id);
      expect([...snapshotCalls, ...changedCalls].sort()).toEqual(Array.from({ length: CALLS }, (_, i) => `c${i}`).sort());
      const positions = w.changes().map((m) => m.invocation_changed.position);
      expect(new Set(positions).size).toBe(positions.length);
    }
  });

  it('is offered by the TypeScript client as an async iterable, ended by its signal, erasure thrown as NOT_FOUND', async () => {
    const conversationId = uniqueName('conv-ts');
    const scope = { tenantId: acme, conversationId, runId: 'r1' };
    await publishEvents(producer, topic, [toolCall(scope, { roundIndex: 0, sequenceIndex: 0, toolCallId: 'c1' })]);
    await waitFor(
      async () => (await watch(reader, acme, conversationId).ready()).snapshot().length,
      (n) => n === 1,
      { what: 'the call recorded' },
    );
    for (const w of watches.splice(0)) w.cancel();
    const client = new ToolHistoryClient({
      address: `127.0.0.1:${port}`,
      token: async () => issueToken(key, { tenants: [acme], scope: 'history:read' }),
    });
    try {
      const abort = new AbortController();
      const seen: string[] = [];
      for await (const change of client.watchConversation({ tenantId: acme, conversationId }, { signal: abort.signal })) {
        if (change.snapshot) {
          seen.push(`snapshot ${change.snapshot.invocations.map((w) => w.invocation?.toolCallId).join()}`);
          await publishEvents(producer, topic, [toolResult(scope, { roundIndex: 0, sequenceIndex: 0, toolCallId: 'c1' })]);
        } else if (change.invocationChanged) {
          seen.push(`${change.invocationChanged.eventType} ${change.invocationChanged.invocation?.invocation?.toolCallId}`);
          abort.abort();
        }
      }
      expect(seen).toEqual(['snapshot c1', 'ToolResultReceived c1']);

      const erasing = (async () => {
        const changes = [];
        for await (const change of client.watchConversation({ tenantId: acme, conversationId })) {
          changes.push(change);
          if (change.snapshot?.complete) {
            const dpo = await clientWith({ tenants: [acme], scope: 'conversations:erase' });
            await dpo.eraseConversation({ tenant_id: acme, conversation_id: conversationId });
          }
        }
        return changes;
      })();
      const refusal = await erasing.then(
        () => null,
        (error: unknown) => error,
      );
      expect(refusal).toBeInstanceOf(ToolHistoryError);
      expect(refusal).toMatchObject({ code: status.NOT_FOUND });
    } finally {
      client.close();
    }
  });

  it('ends the watch with NOT_FOUND when the conversation is erased', async () => {
    const conversationId = uniqueName('conv-erase');
    await publishEvents(producer, topic, [toolCall({ tenantId: acme, conversationId, runId: 'r1' }, { roundIndex: 0, sequenceIndex: 0 })]);
    const w = await watch(reader, acme, conversationId).ready();
    await waitFor(
      async () => w.snapshot().length + w.changes().length,
      (n) => n > 0,
      { what: 'the call' },
    );
    const dpo = await clientWith({ tenants: [acme], scope: 'conversations:erase' });
    await dpo.eraseConversation({ tenant_id: acme, conversation_id: conversationId });
    expect(await w.endedWith()).toEqual({ code: status.NOT_FOUND, details: `conversation ${conversationId} was erased` });
  });

  it('refuses a token without history:read or audit:read, another tenant, and a missing id', async () => {
    const subscriber = await clientWith({ tenants: [acme], scope: 'events:subscribe' });
    expect(await watch(subscriber, acme, 'c').endedWith()).toMatchObject({ code: status.PERMISSION_DENIED });
    const auditor = await clientWith({ tenants: [acme], scope: 'audit:read' });
    expect(await watch(auditor, globex, 'c').endedWith()).toMatchObject({ code: status.PERMISSION_DENIED });
    expect((await watch(auditor, acme, 'c').ready()).snapshotComplete).toBe(true);
    expect(await watch(auditor, acme, '').endedWith()).toEqual({ code: status.INVALID_ARGUMENT, details: 'conversation_id is required' });
  });

  it('bounds the open watches per tenant (with its subscriptions) and admits one again when another closes', async () => {
    const tenant = uniqueName('bounded');
    const client = await clientWith({ tenants: [tenant], scope: 'history:read' });
    const open = [];
    for (let i = 0; i < 3; i += 1) open.push(await watch(client, tenant, `c${i}`).ready());
    const refused = await watch(client, tenant, 'c3').endedWith();
    expect(refused).toMatchObject({ code: status.RESOURCE_EXHAUSTED });
    open[0].cancel();
    await waitFor(
      async () => {
        const again = await watch(client, tenant, 'c4').ready();
        again.cancel();
        return again.snapshotComplete;
      },
      (ok) => ok,
      { what: 'a watch admitted again' },
    );
  });
});

function seenResults(w: Watch): number {
  const inSnapshot = w
    .snapshot()
    .filter((s) => s.invocation.status !== 'INVOCATION_STATUS_PENDING')
    .map((s) => s.invocation.tool_call_id);
  const changed = w
    .changes()
    .filter((m) => m.invocation_changed?.event_type === 'ToolResultReceived')
    .map((m) => m.invocation_changed.invocation.invocation.tool_call_id);
  return new Set([...inSnapshot, ...changed]).size;
}
