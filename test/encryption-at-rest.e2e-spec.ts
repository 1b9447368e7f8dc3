/**
 * Encryption at rest, crypto-shredding and retention end to end
 * (docs/adr/033-encryption-at-rest-and-retention.md): planted values through
 * the real broker into the built service with a keyring of its own and a
 * key store in a PostgreSQL database apart from the payloads'.
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { Producer } from 'kafkajs';
import type { SealedPayload } from '../libs/contract/src';
import { EnvelopeVault, FileKeyring } from '../libs/encryption/src';
import { HistoryFormat, SearchMatch } from '../libs/grpc-api/src';
import { createPool, dropSchema, PostgresDataKeyStore } from '../libs/persistence/src';
import { assertServiceBuilt } from './support/built-service';
import { freshSchema, FreshSchema } from './support/fresh-schema';
import { freePort, RecordedEventMessage, toolHistoryClient, ToolHistoryTestClient } from './support/grpc-client';
import { connectedProducer, freshTopic, publishEvents, testKafka } from './support/kafka-fixtures';
import { dumpSchemaData } from './support/schema-dump';
import { serviceEnvironment, ServiceProcess, ServiceSettings, spawnService, stopService } from './support/service-harness';
import { TEST_DATABASE_URL, uniqueName } from './support/test-environment';
import { writeKeyring } from './support/test-keyring';
import { approvalDecided, approvalRequested, modelResponse, runCompleted, toolCall, toolResult } from './support/tool-event-factory';
import { waitFor } from './support/wait-for';

/** The key store's own database beside the test database: apart from the payloads, as the configuration demands. */
const KEYSTORE_URL = TEST_DATABASE_URL.replace(/\/[^/?]+(\?|$)/, '/toolhistory_test_keys$1');

/** Values no detector redacts: they rest as written, so only encryption keeps them out of the database. */
const KEPT = {
  argument: 'kettle-orbit-7731',
  result: 'marigold-lantern-4402',
  requestReason: 'approve-sapphire-refund',
  decisionReason: 'granted-cobalt-ledger',
  // A round's own text, and its reasoning kept apart while its turn goes on.
  responseText: 'juniper-compass-3307',
  thinking: 'obsidian-falcon-1288',
};
const ERASED = { argument: 'erased-walnut-5150', result: 'erased-thistle-8080' };
const SHORT = { argument: 'ephemeral-quartz-9910', result: 'ephemeral-saffron-2233', reason: 'ephemeral-heron-6161' };
const SEARCH_TABLES = ['invocation_search', 'invocation_substring'];

const POLICY = {
  defaults: { freshnessSeconds: 86_400 },
  // Two seconds: long enough to be recorded, short enough to watch it go.
  tools: { short_lived: { retention: '2s' } },
};

describe('encryption at rest: payloads sealed, erasure and expiry destroy their keys', () => {
  let producer: Producer;
  let db: FreshSchema;
  let service: ServiceProcess;
  let settings: ServiceSettings;
  let client: ToolHistoryTestClient;
  let httpPort: number;
  let keyringFile: string;
  const key = randomBytes(32);
  const tenantId = uniqueName('tenant');
  const [kept, erased, shortLived, thinking] = ['kept', 'erased', 'short', 'thinking'].map((c) => uniqueName(c));
  const at = (s: number) => new Date(Date.now() - 30_000 + s * 1000).toISOString();
  const scope = (conversationId: string) => ({ tenantId, conversationId, runId: 'r1', channel: 'support' });
  const refund = { roundIndex: 0, sequenceIndex: 1, toolCallId: 'c_refund' };
  const events = [
    toolCall(scope(kept), {
      roundIndex: 0,
      sequenceIndex: 0,
      toolCallId: 'c1',
      toolName: 'lookup_order',
      arguments: { note: KEPT.argument },
      occurredAt: at(0),
    }),
    toolResult(scope(kept), { roundIndex: 0, sequenceIndex: 0, toolCallId: 'c1', result: { status: KEPT.result }, occurredAt: at(1) }),
    toolCall(scope(kept), { ...refund, toolName: 'refund', arguments: { amount: 20 }, occurredAt: at(2) }),
    approvalRequested(scope(kept), { ...refund, reason: KEPT.requestReason, occurredAt: at(3) }),
    approvalDecided(scope(kept), { ...refund, approved: true, decidedBy: 'pat', reason: KEPT.decisionReason, occurredAt: at(4) }),
    toolResult(scope(kept), { ...refund, result: 'refunded', occurredAt: at(5) }),
    runCompleted(scope(kept), { assistantMessageId: 'm1', finishReason: 'stop', occurredAt: at(6) }),
    toolCall(scope(erased), {
      roundIndex: 0,
      sequenceIndex: 0,
      toolCallId: 'e1',
      toolName: 'lookup_order',
      arguments: { note: ERASED.argument },
      occurredAt: at(0),
    }),
    toolResult(scope(erased), { roundIndex: 0, sequenceIndex: 0, toolCallId: 'e1', result: ERASED.result, occurredAt: at(1) }),
    runCompleted(scope(erased), { assistantMessageId: 'm1', finishReason: 'stop', occurredAt: at(2) }),
    toolCall(scope(shortLived), {
      roundIndex: 0,
      sequenceIndex: 0,
      toolCallId: 's1',
      toolName: 'short_lived',
      arguments: { note: SHORT.argument },
      occurredAt: at(0),
    }),
    approvalRequested(scope(shortLived), { roundIndex: 0, sequenceIndex: 0, toolCallId: 's1', reason: SHORT.reason, occurredAt: at(1) }),
    approvalDecided(scope(shortLived), {
      roundIndex: 0,
      sequenceIndex: 0,
      toolCallId: 's1',
      approved: true,
      decidedBy: 'kim',
      occurredAt: at(2),
    }),
    toolResult(scope(shortLived), { roundIndex: 0, sequenceIndex: 0, toolCallId: 's1', result: SHORT.result, occurredAt: at(3) }),
    runCompleted(scope(shortLived), { assistantMessageId: 'm1', finishReason: 'stop', occurredAt: at(4) }),
    // A turn that goes on: round 0 answered, round 1 left for the next run; its reasoning rests until the turn answers.
    modelResponse(
      { ...scope(thinking), userMessageId: 'u1' },
      {
        roundIndex: 0,
        text: `Looking up ${KEPT.responseText}.`,
        reasoning: [{ type: 'thinking', thinking: KEPT.thinking, signature: 'sig' }],
        occurredAt: at(0),
      },
    ),
    toolCall(
      { ...scope(thinking), userMessageId: 'u1' },
      { roundIndex: 0, sequenceIndex: 0, toolCallId: 't1', toolName: 'lookup_order', occurredAt: at(0) },
    ),
    toolResult({ ...scope(thinking), userMessageId: 'u1' }, { roundIndex: 0, sequenceIndex: 0, toolCallId: 't1', occurredAt: at(1) }),
    toolCall(
      { ...scope(thinking), userMessageId: 'u1' },
      { roundIndex: 1, sequenceIndex: 0, toolCallId: 't2', toolName: 'lookup_order', occurredAt: at(2) },
    ),
    runCompleted({ ...scope(thinking), userMessageId: 'u1' }, { finishReason: 'tool_limit', occurredAt: at(3) }),
  ];
  const leaksIn = (text: string, planted: Record<string, string>) => Object.entries(planted).filter(([, raw]) => text.includes(raw));
  /** The sealed payloads of a conversation's events as they rest: what a backup of the database keeps. */
  const sealedOf = async (conversationId: string) =>
    (
      await db.pool.query<{ sealed: SealedPayload }>(
        `SELECT payload -> 'sealed' AS sealed FROM events WHERE conversation_id = $1 AND payload -> 'sealed' IS NOT NULL`,
        [conversationId],
      )
    ).rows.map((r) => r.sealed);
  /** Opens sealed payloads with the keyring and the key store, as an attacker holding both and a backup would. */
  const openWithTheKeys = async (conversationId: string, sealed: SealedPayload[]) => {
    const store = await PostgresDataKeyStore.open({ url: KEYSTORE_URL, schema: db.schema, poolSize: 1 }, { migrate: false });
    try {
      const vault = new EnvelopeVault(store, new FileKeyring({ active: 'k1', keys: new Map([['k1', { reveal: () => key }]]) }));
      return await vault.open(sealed.map((s) => ({ tenantId, conversationId, sealed: s })));
    } finally {
      await store.close();
    }
  };
  const searchTexts = async () => {
    const rows = await Promise.all(SEARCH_TABLES.map((t) => db.pool.query<{ row: string }>(`SELECT t::text AS row FROM ${t} t`)));
    return rows.flatMap((r) => r.rows.map((x) => x.row)).join('\n');
  };
  const api = (path: string) => fetch(`http://127.0.0.1:${httpPort}${path}`).then((r) => r.json() as Promise<Record<string, unknown>>);

  beforeAll(async () => {
    assertServiceBuilt();
    const kafka = testKafka();
    db = await freshSchema('atrest');
    const { topic } = await freshTopic(kafka, 3);
    producer = await connectedProducer(kafka);
    const dir = mkdtempSync(join(tmpdir(), 'toolhistory-atrest-'));
    keyringFile = writeKeyring(join(dir, 'keyring.json'), 'k1', { k1: key });
    const policyFile = join(dir, 'policy.json');
    writeFileSync(policyFile, JSON.stringify(POLICY));
    const port = await freePort();
    httpPort = await freePort();
    settings = {
      topic,
      schema: db.schema,
      groupId: uniqueName('g'),
      env: {
        SERVICE_ROLES: 'recorder,grpc',
        GRPC_PORT: String(port),
        HTTP_PORT: String(httpPort),
        POLICY_FILE: policyFile,
        ENCRYPTION_KEYRING_FILE: keyringFile,
        KEYSTORE_URL,
        RETENTION_SWEEP_INTERVAL: '500ms',
        // The most the service ever logs: neither payloads nor keys may appear.
        LOG_LEVEL: 'debug',
      },
    };
    service = spawnService(settings);
    client = toolHistoryClient(port);
    await waitFor(
      () => client.healthCheck().catch(() => 'DOWN'),
      (s) => s === 'SERVING',
      { what: `health SERVING (${service.output().slice(-400)})`, timeoutMs: 60_000 },
    );
    await publishEvents(producer, topic, events);
    await waitFor(
      () => db.pool.query('SELECT count(*)::int AS n FROM events').then((r) => r.rows[0].n),
      (n) => n === events.length,
      { what: 'every event recorded' },
    );
  }, 120_000);

  afterAll(async () => {
    client?.close();
    if (service) await stopService(service);
    await producer?.disconnect();
    await db?.drop();
    await dropSchema(KEYSTORE_URL, db.schema).catch(() => undefined);
  });

  it('keeps no planted value in clear in the event store, the read model or any other table (search documents aside), nor a key in the key store', async () => {
    // Search documents are made once their projection reaches the events: plaintext by nature, derived, and gone with erasure and expiry.
    await waitFor(searchTexts, (text) => text.includes(KEPT.argument) && text.includes(ERASED.argument), { what: 'search documents made' });
    const dump = await dumpSchemaData(db.pool, db.schema);
    const outsideSearch = dump
      .split(/^-- /m)
      .filter((part) => !SEARCH_TABLES.includes(part.split('\n')[0]))
      .join('\n');
    expect(outsideSearch).toContain('"sealed"');
    expect(leaksIn(outsideSearch, { ...KEPT, ...ERASED, ...SHORT })).toEqual([]);
    // The key store holds wrapped keys only: not the keyring's key, in any form.
    const keyStorePool = createPool({ url: KEYSTORE_URL, schema: db.schema, poolSize: 1 });
    const store = await dumpSchemaData(keyStorePool, db.schema).finally(() => keyStorePool.end());
    expect(store).toContain('k1');
    expect(store).not.toContain(key.toString('base64'));
    expect(store).not.toContain(key.toString('hex'));
    // Payloads never reach the log; the keyring's key neither.
    expect(leaksIn(service.output(), { ...KEPT, ...ERASED, ...SHORT, key: key.toString('base64') })).toEqual([]);
  });

  it('answers replay, listings, search, the event stream, the watch and the console with the payloads in clear', async () => {
    const replay = await client.getReplayHistory({ tenant_id: tenantId, conversation_id: kept });
    expect(JSON.stringify(replay.turns)).toContain(KEPT.argument);
    expect(JSON.stringify(replay.turns)).toContain(KEPT.result);

    const listed = await client.listToolInvocations({ tenant_id: tenantId, conversation_id: kept });
    const byTool = Object.fromEntries(listed.invocations.map((i) => [i.tool_name, i]));
    expect(JSON.parse(String(byTool.lookup_order.arguments_json))).toEqual({ note: KEPT.argument });
    expect(JSON.parse(String(byTool.lookup_order.result))).toEqual({ status: KEPT.result });
    expect(byTool.refund).toMatchObject({ approval_request_reason: KEPT.requestReason, approval_decision_reason: KEPT.decisionReason });

    const words = await waitFor(
      () => client.searchToolHistory({ tenant_id: tenantId, query: 'marigold' }),
      (r) => r.hits.length === 1,
      { what: 'a word search hit' },
    );
    expect(words.hits[0].snippet).toContain('**marigold**');
    expect(words.hits[0].invocation?.arguments_json).toContain(KEPT.argument);
    const substring = await waitFor(
      () => client.searchToolHistory({ tenant_id: tenantId, query: 'orbit-77', match: SearchMatch.SEARCH_MATCH_SUBSTRING }),
      (r) => r.hits.length === 1,
      { what: 'a substring search hit' },
    );
    expect(substring.hits[0]).toMatchObject({ matched_in: ['SEARCH_HIT_FIELD_ARGUMENTS'] });
    expect(substring.hits[0].snippet).toContain('kettle-**orbit-77**31');

    const stream = client.subscribeToolEvents({ tenant_id: tenantId });
    // Cancelled below, once everything came: the cancellation is ours.
    stream.on('error', () => undefined);
    const received: RecordedEventMessage[] = [];
    await new Promise<void>((done) => {
      stream.on('data', (e: RecordedEventMessage) => {
        received.push(e);
        if (received.length === events.length) done();
      });
    });
    stream.cancel();
    const payloads = received.map((e) => e.payload_json).join('\n');
    expect(payloads).toContain(KEPT.argument);
    expect(payloads).toContain(KEPT.requestReason);
    expect(payloads).not.toContain('"sealed"');

    const watch = client.watchConversation({ tenant_id: tenantId, conversation_id: kept });
    watch.on('error', () => undefined);
    const snapshot = await new Promise<string>((done) => watch.once('data', (change) => done(JSON.stringify(change))));
    watch.cancel();
    expect(snapshot).toContain(KEPT.argument);

    const timeline = await api(`/api/v1/tenants/${tenantId}/conversations/${kept}/timeline`);
    expect(JSON.stringify(timeline)).toContain(KEPT.result);

    // The round's text and its reasoning, opened for the provider that produced them.
    const withReasoning = await client.getReplayHistory({
      tenant_id: tenantId,
      conversation_id: thinking,
      format: HistoryFormat.HISTORY_FORMAT_ANTHROPIC_MESSAGES,
    });
    const [round] = withReasoning.turns.flatMap((t) => t.rounds);
    expect(round).toMatchObject({ text: `Looking up ${KEPT.responseText}.`, reasoning_omitted: 'REASONING_OMISSION_UNSPECIFIED' });
    expect(JSON.parse(round.reasoning_json)).toEqual([{ type: 'thinking', thinking: KEPT.thinking, signature: 'sig' }]);
  });

  it("erasure destroys the conversation's data keys: the audit line names them, no copy can be opened even with the keyring, no search row holds it", async () => {
    const sealed = await sealedOf(erased);
    expect(sealed.length).toBe(2);
    expect(await openWithTheKeys(erased, sealed)).toEqual([
      JSON.stringify({ arguments: { note: ERASED.argument } }),
      JSON.stringify({ result: ERASED.result }),
    ]);
    await client.eraseConversation({ tenant_id: tenantId, conversation_id: erased });
    expect(await openWithTheKeys(erased, sealed)).toEqual([null, null]);
    const audit = service
      .output()
      .split('\n')
      .find((line) => line.includes('conversation erased') && line.includes(erased));
    const keyIds = [...new Set(sealed.map((s) => s.key))];
    expect(JSON.parse(audit!)).toMatchObject({ audit: 'erasure', destroyedKeys: keyIds });
    expect(leaksIn(await searchTexts(), ERASED)).toEqual([]);
  });

  it('expiry: past its retention a payload leaves the read model and search, its key is destroyed, replay leaves it out; the approval facts stay', async () => {
    const sealed = await sealedOf(shortLived);
    expect(sealed.length).toBe(3);
    const swept = await waitFor(
      () =>
        db.pool.query<{ expired: string[] }>(`SELECT expired_payloads AS expired FROM invocations WHERE conversation_id = $1`, [
          shortLived,
        ]),
      (r) => r.rows[0]?.expired.length === 3,
      { what: 'the sweeper removed the expired payloads', timeoutMs: 20_000 },
    );
    expect(swept.rows[0].expired.sort()).toEqual(['approvalRequestReason', 'arguments', 'result']);
    await waitFor(
      () => openWithTheKeys(shortLived, sealed),
      (opened) => opened.every((o) => o === null),
      { what: 'their data keys destroyed' },
    );
    expect(leaksIn(await searchTexts(), SHORT)).toEqual([]);
    expect(leaksIn(await dumpSchemaData(db.pool, db.schema), SHORT)).toEqual([]);

    const replay = await client.getReplayHistory({ tenant_id: tenantId, conversation_id: shortLived });
    expect(replay.turns).toEqual([]);
    expect(replay.omitted.map((o) => [o.tool_name, o.reason])).toEqual([['short_lived', 'OMISSION_REASON_POLICY_SKIPPED']]);
    const [invocation] = (await client.listToolInvocations({ tenant_id: tenantId, conversation_id: shortLived })).invocations;
    expect(invocation).toMatchObject({
      tool_name: 'short_lived',
      arguments_json: '{}',
      approval: 'APPROVAL_STATUS_APPROVED',
      approval_decided_by: 'kim',
      approval_request_reason: '',
      status: 'INVOCATION_STATUS_SUCCEEDED',
    });
    const metrics = await fetch(`http://127.0.0.1:${httpPort}/metrics`).then((r) => r.text());
    expect(Number(/^toolhistory_payloads_expired_total (\d+)/m.exec(metrics)?.[1])).toBeGreaterThanOrEqual(3);
    expect(Number(/^toolhistory_data_keys_destroyed_total\{reason="expiry"\} (\d+)/m.exec(metrics)?.[1])).toBeGreaterThanOrEqual(1);
    // The payloads that did not expire are as they were.
    expect(JSON.stringify(await client.getReplayHistory({ tenant_id: tenantId, conversation_id: kept }))).toContain(KEPT.result);
  });

  it('rebuilds the read model from the sealed events, and the CLI tells what retention has due', async () => {
    const cli = (args: string[]) =>
      new Promise<{ code: number; stdout: string }>((done) =>
        execFile(
          process.execPath,
          [resolve(__dirname, '../dist/apps/toolhistory/src/cli.js'), ...args],
          { env: { PATH: process.env.PATH ?? '', ...serviceEnvironment(settings) } },
          (error, stdout) => done({ code: error ? Number((error as { code?: number }).code ?? 1) : 0, stdout }),
        ),
      );
    expect(await cli(['rebuild'])).toMatchObject({ code: 0 });
    const replay = await client.getReplayHistory({ tenant_id: tenantId, conversation_id: kept });
    expect(JSON.stringify(replay.turns)).toContain(KEPT.result);
    const [refund] = (await client.listToolInvocations({ tenant_id: tenantId, conversation_id: kept, tool_name: 'refund' })).invocations;
    expect(refund).toMatchObject({ approval_request_reason: KEPT.requestReason });
    const outsideSearch = (await dumpSchemaData(db.pool, db.schema))
      .split(/^-- /m)
      .filter((part) => !SEARCH_TABLES.includes(part.split('\n')[0]))
      .join('\n');
    expect(leaksIn(outsideSearch, { ...KEPT, ...SHORT })).toEqual([]);

    const status = await cli(['retention', 'status', '--json']);
    expect(status.code).toBe(0);
    expect(JSON.parse(status.stdout)).toMatchObject({
      policy: { defaults: null, tools: { short_lived: '2s' } },
      payloads: { duePayloads: 0, expiredPayloads: 3 },
      keys: { due: 0 },
    });
  });
});
