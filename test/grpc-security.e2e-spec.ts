import { type ClientReadableStream, Metadata, status } from '@grpc/grpc-js';
import { request as httpsRequest } from 'node:https';
import type { Producer } from 'kafkajs';
import { assertServiceBuilt } from './support/built-service';
import { freshSchema, type FreshSchema } from './support/fresh-schema';
import {
  bearer,
  freePort,
  listServicesByReflection,
  type RecordedEventMessage,
  toolHistoryClient,
  type ToolHistoryTestClient,
} from './support/grpc-client';
import { connectedProducer, freshTopic, publishEvents, testKafka } from './support/kafka-fixtures';
import { listeningAddresses } from './support/listening-sockets';
import { type ServiceProcess, spawnService, stopService } from './support/service-harness';
import { testCertificates } from './support/test-certificates';
import { uniqueName } from './support/test-environment';
import { issueToken, signingKey, type SigningKey, TEST_AUDIENCE, TEST_ISSUER, writeKeySet } from './support/test-tokens';
import { runCompleted, toolCall, toolResult } from './support/tool-event-factory';
import { countRows } from './support/read-model-queries';
import { waitFor } from './support/wait-for';

interface GrpcError {
  code: number;
  details: string;
}

const outcome = (call: Promise<unknown>): Promise<'ok' | GrpcError> =>
  call.then(
    () => 'ok' as const,
    (error: GrpcError) => ({ code: error.code, details: error.details }),
  );

/** A subscription's first message (the stream is admitted and reading), or its error; the stream is cancelled after. */
function firstEvent(call: ClientReadableStream<RecordedEventMessage>): Promise<RecordedEventMessage> {
  return new Promise((resolve, reject) => {
    call.once('data', (message: RecordedEventMessage) => {
      resolve(message);
      call.cancel();
    });
    call.on('error', (error: GrpcError) => (error.code === status.CANCELLED ? undefined : reject(error)));
  });
}

const certs = testCertificates();
const tls = { ca: certs.read(certs.caCert) };

describe('the gRPC API over TLS with verified callers', () => {
  let producer: Producer;
  let db: FreshSchema;
  let service: ServiceProcess;
  let port: number;
  let httpPort: number;
  let key: SigningKey;
  let stranger: SigningKey;
  const issued: string[] = [];
  const acme = uniqueName('acme');
  const globex = uniqueName('globex');
  const conversationId = uniqueName('conv');
  const erasable = uniqueName('conv-erase');
  const forked = uniqueName('conv-fork');

  const token = async (claims: Record<string, unknown>, options: Parameters<typeof issueToken>[2] = {}, signer = key) => {
    const t = await issueToken(signer, claims, options);
    issued.push(t);
    return t;
  };
  const clients: ToolHistoryTestClient[] = [];
  const clientWith = (t?: string) => {
    const client = toolHistoryClient(port, { tls, token: t });
    clients.push(client);
    return client;
  };

  /** Every ToolHistory RPC, called for a tenant as its use would. */
  const RPCS: Record<string, (client: ToolHistoryTestClient, tenant: string) => Promise<unknown>> = {
    GetReplayHistory: (c, tenant) => c.getReplayHistory({ tenant_id: tenant, conversation_id: conversationId }),
    ListToolInvocations: (c, tenant) => c.listToolInvocations({ tenant_id: tenant }),
    GetUsage: (c, tenant) =>
      c.getUsage({
        tenant_id: tenant,
        from: { seconds: String(Math.floor(Date.now() / 1000) - 86_400) },
        to: { seconds: String(Math.floor(Date.now() / 1000) + 3_600) },
      }),
    SearchToolHistory: (c, tenant) => c.searchToolHistory({ tenant_id: tenant, query: 'order' }),
    SubscribeToolEvents: (c, tenant) => firstEvent(c.subscribeToolEvents({ tenant_id: tenant })),
    EraseConversation: (c, tenant) => c.eraseConversation({ tenant_id: tenant, conversation_id: uniqueName('nothing') }),
    // One fork, however often it is asked (a repeat answers the same fork).
    ForkConversation: (c, tenant) =>
      c.forkConversation({ tenant_id: tenant, conversation_id: conversationId, up_to_message_id: 'm1', new_conversation_id: forked }),
  };
  const SCOPE_OF: Record<string, string> = {
    GetReplayHistory: 'history:read',
    ListToolInvocations: 'audit:read',
    GetUsage: 'audit:read',
    SearchToolHistory: 'audit:read',
    SubscribeToolEvents: 'events:subscribe',
    EraseConversation: 'conversations:erase',
    ForkConversation: 'conversations:fork',
  };
  const ALL_SCOPES = 'history:read audit:read events:subscribe conversations:erase conversations:fork';
  /** Why a token with only `scope` is refused `rpc` (called as RPCS does). */
  const denialOf = (rpc: string, scope: string): string => {
    if (rpc !== 'SearchToolHistory') return `permission denied: ${rpc} needs the scope ${SCOPE_OF[rpc]}`;
    // history:read searches one conversation (test/search-own-history.e2e-spec.ts); RPCS searches the whole tenant.
    return scope === 'history:read'
      ? 'permission denied: SearchToolHistory with history:read needs conversation_id (all of a tenant needs the scope audit:read)'
      : 'permission denied: SearchToolHistory needs one of the scopes audit:read, history:read';
  };

  beforeAll(async () => {
    assertServiceBuilt();
    [key, stranger] = await Promise.all([signingKey('ES256'), signingKey('RS256')]);
    const rsa = await signingKey('RS256');
    const ed = await signingKey('EdDSA');
    const jwksFile = writeKeySet([key, rsa, ed]);
    db = await freshSchema('security');
    const kafka = testKafka();
    const { topic } = await freshTopic(kafka, 3);
    producer = await connectedProducer(kafka);
    port = await freePort();
    httpPort = await freePort();
    service = spawnService({
      topic,
      schema: db.schema,
      groupId: uniqueName('g'),
      env: {
        SERVICE_ROLES: 'recorder,grpc',
        GRPC_PORT: String(port),
        GRPC_HOST: '127.0.0.1',
        HTTP_PORT: String(httpPort),
        HTTP_HOST: '127.0.0.1',
        GRPC_TLS_CERT_FILE: certs.serverCert,
        GRPC_TLS_KEY_FILE: certs.serverKey,
        AUTH_JWKS_FILE: jwksFile,
        AUTH_ISSUER: TEST_ISSUER,
        AUTH_AUDIENCE: TEST_AUDIENCE,
        MAX_SUBSCRIPTIONS_PER_TENANT: '2',
        LOG_LEVEL: 'info',
      },
    });
    const probe = clientWith();
    await waitFor(
      () => probe.healthCheck().catch(() => 'DOWN'),
      (s) => s === 'SERVING',
      { what: 'health SERVING over TLS', timeoutMs: 60_000 },
    );
    const recent = (s: number) => new Date(Date.now() - 60_000 + s * 1000).toISOString();
    const events = [acme, globex].flatMap((tenantId) =>
      [conversationId, erasable].flatMap((conv) => {
        const scope = { tenantId, conversationId: conv, runId: 'r1' };
        return [
          toolCall(scope, { roundIndex: 0, sequenceIndex: 0, toolCallId: 'call_1', toolName: 'lookup_order', occurredAt: recent(0) }),
          toolResult(scope, { roundIndex: 0, sequenceIndex: 0, toolCallId: 'call_1', result: 'order shipped', occurredAt: recent(1) }),
          runCompleted(scope, { assistantMessageId: 'm1', finishReason: 'stop', occurredAt: recent(2) }),
        ];
      }),
    );
    await publishEvents(producer, topic, events);
    await waitFor(
      () => countRows(db.pool, 'events'),
      (n) => n === events.length,
      { what: 'the seed events recorded' },
    );
  });

  afterAll(async () => {
    for (const client of clients) client.close();
    await producer?.disconnect();
    if (service) await stopService(service);
    await db?.drop();
  });

  /** GET over HTTPS, trusting the test CA. */
  const httpsGet = (path: string, bearerToken?: string) =>
    new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = httpsRequest(
        { host: '127.0.0.1', port: httpPort, path, ca: tls.ca, headers: bearerToken ? { authorization: `Bearer ${bearerToken}` } : {} },
        (res) => {
          let body = '';
          res.setEncoding('utf8').on('data', (c: string) => (body += c));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
        },
      );
      req.on('error', reject).end();
    });

  it('serves the HTTP probes over TLS without a token, and /metrics only to a token with metrics:read', async () => {
    expect(await httpsGet('/readyz')).toEqual({ status: 200, body: 'SERVING\n' });
    expect(await httpsGet('/livez')).toEqual({ status: 200, body: 'live\n' });

    const anonymous = await httpsGet('/metrics');
    expect(anonymous.status).toBe(401);
    expect(JSON.parse(anonymous.body)).toMatchObject({ code: 'UNAUTHENTICATED' });
    const forged = await httpsGet('/metrics', await token({ tenants: '*', scope: 'metrics:read' }, {}, stranger));
    expect(forged.status).toBe(401);
    const reader = await httpsGet('/metrics', await token({ tenants: '*', scope: ALL_SCOPES }));
    expect(reader.status).toBe(403);
    expect(JSON.parse(reader.body)).toMatchObject({
      code: 'PERMISSION_DENIED',
      message: 'permission denied: GET /metrics needs the scope metrics:read',
    });
    // A call the caller check refuses is counted too, by its status.
    expect(await outcome(RPCS.GetReplayHistory(clientWith(), acme))).toMatchObject({ code: status.UNAUTHENTICATED });
    const scraper = await httpsGet('/metrics', await token({ scope: 'metrics:read' }));
    expect(scraper.status).toBe(200);
    expect(scraper.body).toMatch(/^# HELP /m);
    expect(scraper.body).toContain(
      'toolhistory_grpc_server_handling_seconds_count{method="/toolhistory.v1.ToolHistory/GetReplayHistory",code="UNAUTHENTICATED"}',
    );
  });

  it('answers health checks without a token', async () => {
    expect(await clientWith().healthCheck()).toBe('SERVING');
    expect(await clientWith().healthCheck('toolhistory.v1.ToolHistory')).toBe('SERVING');
  });

  it('describes itself through server reflection to any verified caller, and to no one else', async () => {
    // A token without any scope or tenant: reflection tells the API's shape, not data.
    const services = await listServicesByReflection(port, { tls, token: await token({}) });
    expect(services).toContain('toolhistory.v1.ToolHistory');
    await expect(listServicesByReflection(port, { tls })).rejects.toMatchObject({
      code: status.UNAUTHENTICATED,
      details: 'unauthenticated: no token: send the header authorization: Bearer <JWT>',
    });
  });

  it('speaks TLS only: a plaintext client gets no answer', async () => {
    const plaintext = toolHistoryClient(port);
    clients.push(plaintext);
    const answer = await outcome(
      plaintext.getReplayHistory({ tenant_id: acme, conversation_id: conversationId }, { deadline: new Date(Date.now() + 3_000) }),
    );
    expect(answer).toMatchObject({ code: status.UNAVAILABLE });
  });

  it('answers UNAUTHENTICATED to every RPC called without a token', async () => {
    const anonymous = clientWith();
    for (const [rpc, call] of Object.entries(RPCS)) {
      expect({ rpc, answer: await outcome(call(anonymous, acme)) }).toEqual({
        rpc,
        answer: { code: status.UNAUTHENTICATED, details: 'unauthenticated: no token: send the header authorization: Bearer <JWT>' },
      });
    }
  });

  it('answers UNAUTHENTICATED to a malformed, forged, expired, early, mis-issued, mis-addressed or unknown-key token', async () => {
    const claims = { tenants: [acme], scope: ALL_SCOPES };
    const good = await token(claims);
    const [head, body, signature] = good.split('.');
    const widened = Buffer.from(JSON.stringify({ ...JSON.parse(Buffer.from(body, 'base64url').toString()), tenants: '*' })).toString(
      'base64url',
    );
    const cases: Array<[string, Metadata, string]> = [
      ['malformed', bearer('definitely-not-a-jwt'), 'unauthenticated: malformed token'],
      ['forged', bearer(`${head}.${widened}.${signature}`), 'unauthenticated: token signature does not verify'],
      ['expired', bearer(await token(claims, { expiresIn: -120 })), 'unauthenticated: token expired'],
      ['not yet valid', bearer(await token(claims, { notBefore: 300 })), 'unauthenticated: token not yet valid'],
      [
        'another issuer',
        bearer(await token(claims, { issuer: 'https://elsewhere.example/' })),
        'unauthenticated: token issuer not accepted',
      ],
      ['another audience', bearer(await token(claims, { audience: 'billing' })), 'unauthenticated: token audience not accepted'],
      ['an unknown key', bearer(await token(claims, {}, stranger)), 'unauthenticated: token signed with a key that is not in the key set'],
    ];
    const anonymous = clientWith();
    for (const [what, metadata, details] of cases) {
      const answer = await outcome(anonymous.getReplayHistory({ tenant_id: acme, conversation_id: conversationId }, { metadata }));
      expect({ what, answer }).toEqual({ what, answer: { code: status.UNAUTHENTICATED, details } });
    }
    const basic = new Metadata();
    basic.set('authorization', 'Basic dXNlcjpwYXNz');
    expect(await outcome(anonymous.listToolInvocations({ tenant_id: acme }, { metadata: basic }))).toEqual({
      code: status.UNAUTHENTICATED,
      details: 'unauthenticated: the authorization header must be Bearer <JWT>',
    });
  });

  it('opens each RPC to exactly the scope it needs, naming the missing one', async () => {
    for (const scope of new Set(Object.values(SCOPE_OF))) {
      const client = clientWith(await token({ tenants: [acme], scope }));
      for (const [rpc, call] of Object.entries(RPCS)) {
        const answer = await outcome(call(client, acme));
        const expected = SCOPE_OF[rpc] === scope ? 'ok' : { code: status.PERMISSION_DENIED, details: denialOf(rpc, scope) };
        expect({ scope, rpc, answer }).toEqual({ scope, rpc, answer: expected });
      }
    }
  });

  it('answers PERMISSION_DENIED for a tenant the token does not hold, alike whether it has data or not', async () => {
    const client = clientWith(await token({ tenants: [globex], scope: ALL_SCOPES }));
    const unknownTenant = uniqueName('nobody');
    for (const [rpc, call] of Object.entries(RPCS)) {
      const withData = await outcome(call(client, acme));
      const withoutData = await outcome(call(client, unknownTenant));
      expect({ rpc, withData }).toEqual({
        rpc,
        withData: { code: status.PERMISSION_DENIED, details: `permission denied: tenant "${acme}" is not permitted to this caller` },
      });
      expect({ rpc, withoutData }).toEqual({
        rpc,
        withoutData: {
          code: status.PERMISSION_DENIED,
          details: `permission denied: tenant "${unknownTenant}" is not permitted to this caller`,
        },
      });
    }
    // The token's own tenant is served.
    expect((await client.getReplayHistory({ tenant_id: globex, conversation_id: conversationId })).turns).toHaveLength(1);
  });

  it('lets an operator token ("*") use every tenant, within its scopes', async () => {
    const operator = clientWith(await token({ tenants: '*', scope: 'audit:read' }, { subject: 'ops@example' }));
    // The tenant's own invocations: the fork the scope test made holds copies of them.
    const ownOf = (listed: { invocations: Array<{ conversation_id: string }> }) =>
      listed.invocations.filter((i) => i.conversation_id !== forked);
    expect(ownOf(await operator.listToolInvocations({ tenant_id: acme }))).toHaveLength(2);
    expect((await operator.listToolInvocations({ tenant_id: globex })).invocations).toHaveLength(2);
    expect(await outcome(operator.getReplayHistory({ tenant_id: acme, conversation_id: conversationId }))).toEqual({
      code: status.PERMISSION_DENIED,
      details: 'permission denied: GetReplayHistory needs the scope history:read',
    });
  });

  it('accepts a well-formed request only within the size limit: larger is RESOURCE_EXHAUSTED, never INTERNAL', async () => {
    const client = clientWith(await token({ tenants: [acme], scope: ALL_SCOPES }));
    // A search query may be long (its first 1,000 characters are used): the request's size is what is bounded.
    const answer = await outcome(client.searchToolHistory({ tenant_id: acme, query: 'order '.repeat(12_000) }));
    expect(answer).toMatchObject({ code: status.RESOURCE_EXHAUSTED });
    expect(await outcome(client.searchToolHistory({ tenant_id: acme, query: 'order '.repeat(10_000) }))).toBe('ok');
    // An id that long is refused for what it is: no event has one.
    expect(await outcome(client.getReplayHistory({ tenant_id: acme, conversation_id: 'c'.repeat(60_000) }))).toEqual({
      code: status.INVALID_ARGUMENT,
      details: 'conversation_id must be at most 256 characters',
    });
  });

  it('keeps at most MAX_SUBSCRIPTIONS_PER_TENANT streams open per tenant', async () => {
    const client = clientWith(await token({ tenants: [acme, globex], scope: 'events:subscribe' }));
    const open: Array<ClientReadableStream<RecordedEventMessage>> = [];
    const admitted = async () => {
      const call = client.subscribeToolEvents({ tenant_id: acme });
      const first = await new Promise<RecordedEventMessage | GrpcError>((resolve) => {
        call.once('data', resolve);
        call.once('error', resolve);
      });
      if ('position' in first) open.push(call);
      return 'position' in first ? 'ok' : { code: first.code, details: first.details };
    };
    try {
      // Streams of earlier tests may still be closing: their slots free when the server sees the cancel.
      await waitFor(admitted, (answer) => answer === 'ok', { what: 'a first subscription', timeoutMs: 10_000 });
      await waitFor(admitted, (answer) => answer === 'ok', { what: 'a second subscription', timeoutMs: 10_000 });
      expect(await admitted()).toEqual({
        code: status.RESOURCE_EXHAUSTED,
        details:
          'tenant has 2 open streams (subscriptions and watches) on this server, the most it allows (MAX_SUBSCRIPTIONS_PER_TENANT); close one first',
      });
      // Another tenant has its own allowance.
      expect(await outcome(firstEvent(client.subscribeToolEvents({ tenant_id: globex })))).toBe('ok');
      // Closing one makes room (the server notices the cancel).
      open.shift()!.cancel();
      await waitFor(admitted, (answer) => answer === 'ok', { what: 'a freed subscription slot', timeoutMs: 10_000 });
    } finally {
      for (const call of open) call.cancel();
    }
  });

  it('records each erasure with the token subject, tenant, conversation and counts', async () => {
    const dpo = clientWith(await token({ tenants: [acme], scope: 'conversations:erase' }, { subject: 'dpo-7f3a' }));
    const erased = await dpo.eraseConversation({ tenant_id: acme, conversation_id: erasable });
    expect(erased).toEqual({ erased_events: '3', erased_invocations: '1' });
    const line = await waitFor(
      async () =>
        service
          .output()
          .split('\n')
          .find((l) => l.includes('"audit":"erasure"') && l.includes(erasable)),
      (found) => found !== undefined,
      { what: 'the erasure audit line' },
    );
    expect(JSON.parse(line!)).toMatchObject({
      audit: 'erasure',
      subject: 'dpo-7f3a',
      tenantId: acme,
      conversationId: erasable,
      erasedEvents: 3,
      erasedInvocations: 1,
      msg: 'conversation erased',
    });
  });

  it('writes no token and no key to its log', async () => {
    await outcome(clientWith(await token({ tenants: [acme], scope: 'history:read' })).listToolInvocations({ tenant_id: acme }));
    const log = service.output();
    expect(log).toContain('call refused');
    expect(issued.length).toBeGreaterThan(10);
    for (const t of issued) {
      expect(log).not.toContain(t);
      expect(log).not.toContain(t.split('.')[2]);
    }
    expect(log).not.toContain('PRIVATE KEY');
    expect(log).not.toMatch(/Bearer [A-Za-z0-9_-]{8}/);
  });
});

describe('mutual TLS', () => {
  it('serves only clients with a certificate of the configured CA', async () => {
    assertServiceBuilt();
    const db = await freshSchema('mtls');
    const key = await signingKey('EdDSA');
    const port = await freePort();
    const service = spawnService({
      topic: 'unused',
      schema: db.schema,
      groupId: uniqueName('g'),
      env: {
        SERVICE_ROLES: 'grpc',
        GRPC_PORT: String(port),
        GRPC_HOST: '127.0.0.1',
        GRPC_TLS_CERT_FILE: certs.serverCert,
        GRPC_TLS_KEY_FILE: certs.serverKey,
        GRPC_TLS_CLIENT_CA_FILE: certs.caCert,
        AUTH_JWKS_FILE: writeKeySet([key]),
        AUTH_AUDIENCE: TEST_AUDIENCE,
      },
    });
    const token = await issueToken(key, { tenants: ['t'], scope: 'history:read' });
    const withCertificate = toolHistoryClient(port, {
      tls: { ...tls, cert: certs.read(certs.clientCert), key: certs.read(certs.clientKey) },
      token,
    });
    const withoutCertificate = toolHistoryClient(port, { tls, token });
    const stranger = toolHistoryClient(port, {
      tls: { ...tls, cert: certs.read(certs.strangerCert), key: certs.read(certs.strangerKey) },
      token,
    });
    try {
      await waitFor(
        () => outcome(withCertificate.getReplayHistory({ tenant_id: 't', conversation_id: 'c' })),
        (answer) => answer === 'ok',
        { what: 'a call with a client certificate', timeoutMs: 60_000 },
      );
      const deadline = () => ({ deadline: new Date(Date.now() + 3_000) });
      expect(await outcome(withoutCertificate.getReplayHistory({ tenant_id: 't', conversation_id: 'c' }, deadline()))).toMatchObject({
        code: status.UNAVAILABLE,
      });
      expect(await outcome(stranger.getReplayHistory({ tenant_id: 't', conversation_id: 'c' }, deadline()))).toMatchObject({
        code: status.UNAVAILABLE,
      });
    } finally {
      for (const client of [withCertificate, withoutCertificate, stranger]) client.close();
      await stopService(service);
      await db.drop();
    }
  });
});

describe('where the server listens', () => {
  it('without authentication, on loopback only', async () => {
    assertServiceBuilt();
    const port = await freePort();
    const service = spawnService({
      topic: 'unused',
      schema: 'unused_schema',
      groupId: uniqueName('g'),
      env: { SERVICE_ROLES: 'grpc', GRPC_PORT: String(port), MIGRATE_ON_START: 'false', LOG_LEVEL: 'info' },
    });
    try {
      await waitFor(
        async () => service.output(),
        (out) => out.includes('toolhistory started'),
        { what: 'start-up' },
      );
      expect(listeningAddresses(port)).toEqual(['127.0.0.1']);
      // Without authentication, reflection answers without a token, like everything else.
      expect(await listServicesByReflection(port)).toContain('toolhistory.v1.ToolHistory');
      const started = JSON.parse(
        service
          .output()
          .split('\n')
          .find((l) => l.includes('toolhistory started'))!,
      );
      expect(started.grpc).toEqual({ host: '127.0.0.1', port, tls: false, clientCertificates: false, auth: 'unconfigured' });
      // HTTP (metrics, probes) by the same rule: loopback only.
      expect(started.http).toEqual({ host: '127.0.0.1', port: expect.any(Number), tls: false });
      expect(listeningAddresses(started.http.port)).toEqual(['127.0.0.1']);
    } finally {
      await stopService(service);
    }
  });

  it('refuses a public address without authentication, naming the rule (exit 78)', async () => {
    const service = spawnService({
      topic: 'unused',
      schema: 'unused_schema',
      groupId: uniqueName('g'),
      env: { SERVICE_ROLES: 'grpc', GRPC_HOST: '0.0.0.0', GRPC_PORT: String(await freePort()) },
    });
    const exit = await service.exited;
    expect(exit.code).toBe(78);
    expect(service.output()).toContain('GRPC_HOST=0.0.0.0 would let other machines call the service, but no authentication is configured');
    expect(service.output()).toContain('AUTH_MODE=none');
  });

  it('serves a public address without authentication only when AUTH_MODE=none says so, with a warning', async () => {
    const port = await freePort();
    const service = spawnService({
      topic: 'unused',
      schema: 'unused_schema',
      groupId: uniqueName('g'),
      env: {
        SERVICE_ROLES: 'grpc',
        GRPC_HOST: '0.0.0.0',
        AUTH_MODE: 'none',
        GRPC_PORT: String(port),
        MIGRATE_ON_START: 'false',
        LOG_LEVEL: 'info',
      },
    });
    try {
      await waitFor(
        async () => service.output(),
        (out) => out.includes('toolhistory started'),
        { what: 'start-up' },
      );
      expect(listeningAddresses(port)).toEqual(['0.0.0.0']);
      const warning = JSON.parse(
        service
          .output()
          .split('\n')
          .find((l) => l.includes('AUTH_MODE=none and GRPC_HOST=0.0.0.0'))!,
      );
      expect(warning).toMatchObject({ level: 'warn', component: 'config' });
    } finally {
      await stopService(service);
    }
  });
});
