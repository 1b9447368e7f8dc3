import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Kafka, Producer } from 'kafkajs';
import type { ToolEvent } from '../libs/contract/src';
import { UsageBucket } from '../libs/grpc-api/src';
import { assertServiceBuilt } from './support/built-service';
import { freshSchema, FreshSchema } from './support/fresh-schema';
import { freePort, toolHistoryClient, ToolHistoryTestClient } from './support/grpc-client';
import { connectedProducer, freshTopic, publishEvents, readTopic, testKafka } from './support/kafka-fixtures';
import { dumpSchemaData } from './support/schema-dump';
import { ServiceProcess, spawnService, stopService } from './support/service-harness';
import { uniqueName } from './support/test-environment';
import { runCompleted, runFailed, toolCall, toolResult } from './support/tool-event-factory';
import { waitFor } from './support/wait-for';

/** Every raw value planted below; none may appear in the database, the dead-letter topic or the log. */
const PLANTED = {
  email: 'ann.lee@example.org',
  phone: '+44 20 7946 0958',
  bearer: '9f8e7d6c5b4a39281706f5e4d3c2b1a0',
  card: '4111 1111 1111 1111',
  cardAsNumber: '4012888888881881',
  cvc: 'CVC-7Q3X',
  iban: 'GB82 WEST 1234 5698 7654 32',
  openAiKey: 'sk-proj-Xq8RkT2mWvZ4nY7pLs3Bd9Hc',
  anthropicKey: 'sk-ant-api03-AbCdEfGhIjKlMnOpQrStUv',
  awsKey: 'AKIAIOSFODNN7EXAMPLE',
  githubToken: 'ghp_aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3zA5',
  jwt: 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U',
  ip: '203.0.113.77',
  privateKeyBody: 'MIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gun',
  password: 'Tr0ub4dor',
  diagnosis: 'chronic kidney disease stage 3',
  medication: 'lisinopril 10mg',
  cutTail: 'tail-secret-xyzzy',
  vaultNote: 'codeword-zebra-42',
  vaultValue: 'hunter2-vault-99',
  probeArgument: 'probe-value-alpha-7',
  probeResult: 'probe-result-beta-8',
  poisonEmail: 'poison@example.net',
  poisonCard: '5555 5555 5555 4444',
  poisonText: 'ghp_zZ9yY8xX7wW6vV5uU4tT3sS2rR1qQ0pP9oO8',
};

const POLICY = {
  defaults: { freshnessSeconds: 3600 },
  tools: {
    lookup_patient: { maskResult: ['$.diagnosis', '$.medications[*]'] },
    charge_card: { maskArguments: ['$.card.cvc'] },
    fetch_page: { maxResultChars: 120 },
    vault_read: { persist: 'none' },
    audit_probe: { persist: 'metadata' },
  },
};

describe('redaction end to end: planted secrets through the real broker never rest anywhere', () => {
  let kafka: Kafka;
  let producer: Producer;
  let db: FreshSchema;
  let service: ServiceProcess;
  let client: ToolHistoryTestClient;
  let topic: string;
  let deadLetterTopic: string;
  const tenantId = uniqueName('tenant');
  const conversationId = uniqueName('conv');
  const run = (runId: string) => ({ tenantId, conversationId, runId, channel: 'support' });
  const call = (seq: number, toolName: string, args: Record<string, unknown>) =>
    toolCall(run('r1'), { roundIndex: 0, sequenceIndex: seq, toolCallId: `call_${toolName}`, toolName, arguments: args as never });
  const result = (seq: number, toolName: string, value: unknown) =>
    toolResult(run('r1'), { roundIndex: 0, sequenceIndex: seq, toolCallId: `call_${toolName}`, result: value as never });

  // Recorded a minute ago, one second apart, so every result is fresh for replay.
  const recent = (trace: ToolEvent[]) =>
    trace.map((e, i) => ({ ...e, occurredAt: new Date(Date.now() - 60_000 + i * 1_000).toISOString() }));
  const events: ToolEvent[] = recent([
    call(0, 'send_email', {
      to: PLANTED.email,
      body: `Call me at ${PLANTED.phone}`,
      headers: JSON.stringify({ Authorization: `Bearer ${PLANTED.bearer}` }),
    }),
    result(0, 'send_email', `sent to ${PLANTED.email}`),
    call(1, 'charge_card', {
      card: { number: PLANTED.card, cvc: PLANTED.cvc },
      iban: PLANTED.iban,
      backupCard: Number(PLANTED.cardAsNumber),
    }),
    result(1, 'charge_card', { status: 'ok', receipt: `https://pay.example.com/r?api_key=${PLANTED.openAiKey}` }),
    // The result comes before its call: the tool's masks apply once the call names the tool.
    result(2, 'lookup_patient', {
      diagnosis: PLANTED.diagnosis,
      medications: [PLANTED.medication],
      session: PLANTED.jwt,
      clientIp: PLANTED.ip,
    }),
    call(2, 'lookup_patient', { patientId: 'p-77' }),
    call(3, 'fetch_page', { url: 'https://docs.example.com/setup' }),
    result(
      3,
      'fetch_page',
      `Setup: export AWS_ACCESS_KEY_ID=${PLANTED.awsKey} then run the installer. ${'More text. '.repeat(20)}${PLANTED.cutTail}`,
    ),
    call(4, 'deploy', {
      key: `-----BEGIN RSA PRIVATE KEY-----\n${PLANTED.privateKeyBody}\n-----END RSA PRIVATE KEY-----`,
      config: `password=${PLANTED.password}`,
      token: PLANTED.githubToken,
    }),
    result(4, 'deploy', 'deployed'),
    call(5, 'vault_read', { path: 'kv/prod', note: PLANTED.vaultNote }),
    result(5, 'vault_read', `value: ${PLANTED.vaultValue}`),
    call(6, 'audit_probe', { q: PLANTED.probeArgument }),
    result(6, 'audit_probe', PLANTED.probeResult),
    runCompleted(run('r1'), { assistantMessageId: 'msg-r1', finishReason: 'stop' }),
    runFailed(run('r2'), { error: { code: 'auth', message: `upstream rejected key ${PLANTED.anthropicKey}` } }),
  ]);
  const poison = [
    JSON.stringify({
      ...toolCall(run('r3'), { roundIndex: -1, sequenceIndex: 0 }),
      arguments: { to: PLANTED.poisonEmail, card: PLANTED.poisonCard },
    }),
    `not json at all: ${PLANTED.poisonText} ${PLANTED.poisonEmail}`,
  ];

  beforeAll(async () => {
    assertServiceBuilt();
    kafka = testKafka();
    db = await freshSchema('redaction');
    ({ topic, deadLetterTopic } = await freshTopic(kafka, 3));
    producer = await connectedProducer(kafka);
    const policyFile = join(mkdtempSync(join(tmpdir(), 'toolhistory-policy-')), 'policy.json');
    writeFileSync(policyFile, JSON.stringify(POLICY));
    const port = await freePort();
    service = spawnService({
      topic,
      schema: db.schema,
      groupId: uniqueName('g'),
      // Debug: the most the service ever logs.
      env: { SERVICE_ROLES: 'recorder,grpc', GRPC_PORT: String(port), POLICY_FILE: policyFile, LOG_LEVEL: 'debug' },
    });
    client = toolHistoryClient(port);
    await waitFor(
      () => client.healthCheck().catch(() => 'DOWN'),
      (s) => s === 'SERVING',
      { what: 'health SERVING', timeoutMs: 60_000 },
    );
    await publishEvents(producer, topic, events);
    await producer.send({ topic, acks: -1, messages: poison.map((value) => ({ key: conversationId, value })) });
    await waitFor(
      () => db.pool.query('SELECT count(*)::int AS n FROM events').then((r) => r.rows[0].n),
      (n) => n === events.length,
      {
        what: 'all valid events recorded',
      },
    );
  });

  afterAll(async () => {
    client?.close();
    if (service) await stopService(service);
    await producer?.disconnect();
    await db?.drop();
  });

  const leaksIn = (text: string) => Object.entries(PLANTED).filter(([, raw]) => text.includes(raw) || text.includes(raw.replace(/ /g, '')));

  it('leaves no planted value in a dump of the whole database schema', async () => {
    const dump = await dumpSchemaData(db.pool, db.schema);
    // Payloads rest sealed (encryption at rest, the default); the notes of what redaction did rest in clear.
    expect(dump).toContain('"sealed"');
    expect(dump).toMatch(/"+email"+:1/);
    expect(leaksIn(dump)).toEqual([]);
  });

  it('dead-letters the poison messages redacted, or reduced to their size', async () => {
    const letters = await readTopic(kafka, deadLetterTopic, poison.length);
    const text = letters.map((l) => `${l.value}\n${JSON.stringify(l.headers)}`).join('\n');
    expect(leaksIn(text)).toEqual([]);
    expect(JSON.parse(letters[0].value!)).toMatchObject({ arguments: { to: '[REDACTED:email]', card: '[REDACTED:payment_card]' } });
    expect(JSON.parse(letters[1].value!)).toEqual({ unparseable: true, originalBytes: Buffer.byteLength(poison[1]) });
  });

  it('replays the markers, the truncation notice and the policy omissions', async () => {
    const response = await client.getReplayHistory(
      { tenant_id: tenantId, conversation_id: conversationId },
      { deadline: new Date(Date.now() + 5_000) },
    );
    expect(leaksIn(JSON.stringify(response))).toEqual([]);
    const calls = Object.fromEntries(response.turns[0].rounds[0].calls.map((c) => [c.tool_name, c]));
    expect(JSON.parse(String(calls.send_email.arguments_json))).toEqual({
      to: '[REDACTED:email]',
      body: 'Call me at [REDACTED:phone]',
      headers: '{"Authorization":"Bearer [REDACTED:secret]"}',
    });
    expect(JSON.parse(String(calls.charge_card.arguments_json))).toEqual({
      card: { number: '[REDACTED:payment_card]', cvc: '[REDACTED:$.card.cvc]' },
      iban: '[REDACTED:iban]',
      backupCard: '[REDACTED:payment_card]',
    });
    expect(JSON.parse(calls.lookup_patient.result)).toEqual({
      diagnosis: '[REDACTED:$.diagnosis]',
      medications: ['[REDACTED:$.medications[*]]'],
      session: '[REDACTED:jwt]',
      clientIp: '[REDACTED:ip]',
    });
    expect(calls.fetch_page.result).toMatch(/^Setup: export AWS_ACCESS_KEY_ID=\[REDACTED:secret\] then run .*…\[truncated [\d,]+ chars\]$/);
    expect(calls.deploy.arguments_json).toContain('[REDACTED:secret]');
    expect(Object.keys(calls).sort()).toEqual(['charge_card', 'deploy', 'fetch_page', 'lookup_patient', 'send_email']);
    expect(response.omitted.map((o) => [o.tool_name, o.reason])).toEqual([
      ['vault_read', 'OMISSION_REASON_POLICY_SKIPPED'],
      ['audit_probe', 'OMISSION_REASON_POLICY_SKIPPED'],
    ]);
  });

  it('records how many markers of each kind every invocation got, never the values', async () => {
    const { rows } = await db.pool.query<{ tool_name: string; persist: string; argument_redactions: object; result_redactions: object }>(
      'SELECT tool_name, persist, argument_redactions, result_redactions FROM invocations WHERE conversation_id = $1 ORDER BY sequence_index',
      [conversationId],
    );
    expect(rows).toEqual([
      { tool_name: 'send_email', persist: 'full', argument_redactions: { email: 1, phone: 1, secret: 1 }, result_redactions: { email: 1 } },
      {
        tool_name: 'charge_card',
        persist: 'full',
        argument_redactions: { '$.card.cvc': 1, payment_card: 2, iban: 1 },
        result_redactions: { secret: 1 },
      },
      {
        tool_name: 'lookup_patient',
        persist: 'full',
        argument_redactions: {},
        result_redactions: { jwt: 1, ip: 1, '$.diagnosis': 1, '$.medications[*]': 1 },
      },
      { tool_name: 'fetch_page', persist: 'full', argument_redactions: {}, result_redactions: { secret: 1, truncated: 1 } },
      { tool_name: 'deploy', persist: 'full', argument_redactions: { secret: 3 }, result_redactions: {} },
      { tool_name: 'vault_read', persist: 'none', argument_redactions: {}, result_redactions: {} },
      { tool_name: 'audit_probe', persist: 'metadata', argument_redactions: {}, result_redactions: {} },
    ]);
  });

  it('lists every invocation for audit with its redaction counts, and counts usage, over gRPC', async () => {
    const page = await client.listToolInvocations({ tenant_id: tenantId, conversation_id: conversationId, page_size: 5 });
    expect(page.invocations).toHaveLength(5);
    const rest = await client.listToolInvocations({
      tenant_id: tenantId,
      conversation_id: conversationId,
      page_size: 5,
      page_token: page.next_page_token,
    });
    expect(rest.next_page_token).toBe('');
    const all = [...page.invocations, ...rest.invocations];
    expect(leaksIn(JSON.stringify(all))).toEqual([]);
    expect(all.map((i) => [i.tool_name, i.persist, i.status])).toEqual([
      ['send_email', 'PERSIST_MODE_FULL', 'INVOCATION_STATUS_SUCCEEDED'],
      ['charge_card', 'PERSIST_MODE_FULL', 'INVOCATION_STATUS_SUCCEEDED'],
      ['lookup_patient', 'PERSIST_MODE_FULL', 'INVOCATION_STATUS_SUCCEEDED'],
      ['fetch_page', 'PERSIST_MODE_FULL', 'INVOCATION_STATUS_SUCCEEDED'],
      ['deploy', 'PERSIST_MODE_FULL', 'INVOCATION_STATUS_SUCCEEDED'],
      ['vault_read', 'PERSIST_MODE_NONE', 'INVOCATION_STATUS_SUCCEEDED'],
      ['audit_probe', 'PERSIST_MODE_METADATA', 'INVOCATION_STATUS_SUCCEEDED'],
    ]);
    expect(all[1]).toMatchObject({ argument_redactions: { '$.card.cvc': 1, payment_card: 2, iban: 1 }, result_redactions: { secret: 1 } });
    expect(all[5]).toMatchObject({ arguments_json: '{}', result: 'null' });

    const usage = await client.getUsage({
      tenant_id: tenantId,
      from: { seconds: String(Math.floor(Date.now() / 1000) - 3_600) },
      to: { seconds: String(Math.floor(Date.now() / 1000) + 60) },
      bucket: UsageBucket.USAGE_BUCKET_DAY,
    });
    expect(usage.rows.map((r) => [r.tool_name, r.calls, r.errors])).toEqual(
      [...all.map((i) => [i.tool_name, '1', '0'])].sort((a, b) => String(a[0]).localeCompare(String(b[0]))),
    );
    expect(usage).toMatchObject({ input_tokens: '1200', output_tokens: '80' });
    await expect(client.listToolInvocations({ tenant_id: '' })).rejects.toMatchObject({ details: 'tenant_id is required' });
  });

  it('searches the redacted payloads over gRPC: a planted value is never found, its marker and the tool are', async () => {
    // Search follows the recording after commit: once the tool is found, its payloads are searchable too.
    const byTool = await waitFor(
      () => client.searchToolHistory({ tenant_id: tenantId, query: 'send_email', conversation_id: conversationId }),
      (answer) => answer.hits.length > 0,
      { what: 'the search projection to reach send_email' },
    );
    expect(byTool.hits.map((h) => h.invocation.tool_name)).toEqual(['send_email']);
    const byValue = await client.searchToolHistory({ tenant_id: tenantId, query: PLANTED.email });
    expect(byValue.hits).toEqual([]);
    expect(byTool.hits[0].snippet).toMatch(/^\*\*send\*\*_\*\*email\*\* /); // each matched word of the identifier is marked
    expect(leaksIn(JSON.stringify(byTool))).toEqual([]);
    const byMarker = await client.searchToolHistory({ tenant_id: tenantId, query: 'REDACTED email' });
    expect(byMarker.hits.map((h) => h.invocation.tool_name)).toContain('send_email');
    expect(byMarker.hits.every((h) => h.score > 0)).toBe(true);
    await expect(client.searchToolHistory({ tenant_id: tenantId, query: '' })).rejects.toMatchObject({
      details: expect.stringContaining('query'),
    });
  });

  it('erases the conversation; a redelivery of its events does not bring it back', async () => {
    const erased = await client.eraseConversation({ tenant_id: tenantId, conversation_id: conversationId });
    expect(erased).toEqual({ erased_events: String(events.length), erased_invocations: '7' });
    const empty = { turns: [], omitted: [], history_tokens: 0, pending_approvals: [] };
    const replay = () => client.getReplayHistory({ tenant_id: tenantId, conversation_id: conversationId });
    expect(await replay()).toEqual(empty);

    // The same events again (a producer replaying its outbox), then a marker event of another conversation.
    const marker = runCompleted({ tenantId, conversationId: uniqueName('after'), runId: 'r' });
    await publishEvents(producer, topic, [...events, marker]);
    await waitFor(
      () =>
        db.pool.query('SELECT count(*)::int AS n FROM events WHERE conversation_id = $1', [marker.conversationId]).then((r) => r.rows[0].n),
      (n) => n === 1,
      {
        what: 'the marker event recorded',
      },
    );
    const all = await db.pool.query('SELECT count(*)::int AS n FROM events WHERE tenant_id = $1 AND conversation_id = $2', [
      tenantId,
      conversationId,
    ]);
    expect(all.rows[0].n).toBe(0);
    expect(await replay()).toEqual(empty);
    await expect(client.eraseConversation({ tenant_id: tenantId, conversation_id: '' })).rejects.toMatchObject({
      details: 'conversation_id is required',
    });
  });

  it('wrote nothing planted to its log', async () => {
    await stopService(service);
    const log = service.output();
    expect(log).toContain('conversation erased');
    expect(leaksIn(log)).toEqual([]);
  });
});
