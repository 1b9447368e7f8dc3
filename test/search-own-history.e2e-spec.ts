import { status } from '@grpc/grpc-js';
import { SearchMatch } from '../libs/grpc-api/src';
import type { Producer } from 'kafkajs';
import { assertServiceBuilt } from './support/built-service';
import { freshSchema, type FreshSchema } from './support/fresh-schema';
import { freePort, toolHistoryClient, type ToolHistoryTestClient } from './support/grpc-client';
import { connectedProducer, freshTopic, publishEvents, testKafka } from './support/kafka-fixtures';
import { type ServiceProcess, spawnService, stopService } from './support/service-harness';
import { testCertificates } from './support/test-certificates';
import { uniqueName } from './support/test-environment';
import { issueToken, signingKey, type SigningKey, TEST_AUDIENCE, TEST_ISSUER, writeKeySet } from './support/test-tokens';
import { runCompleted, toolCall, toolResult } from './support/tool-event-factory';
import { waitFor } from './support/wait-for';

const certs = testCertificates();
const tls = { ca: certs.read(certs.caCert) };

/** An agent searching its own conversation with history:read; an auditor searching the tenant with audit:read. */
describe('SearchToolHistory by substring, by an agent in its own conversation (built service, broker, verified callers)', () => {
  let producer: Producer;
  let db: FreshSchema;
  let service: ServiceProcess;
  let port: number;
  let key: SigningKey;
  const clients: ToolHistoryTestClient[] = [];
  const acme = uniqueName('acme');
  const globex = uniqueName('globex');
  const mine = uniqueName('conv-mine');
  const theirs = uniqueName('conv-theirs');

  const clientWith = async (claims: Record<string, unknown>) => {
    const client = toolHistoryClient(port, { tls, token: await issueToken(key, claims) });
    clients.push(client);
    return client;
  };
  const outcome = (call: Promise<unknown>) =>
    call.then(
      () => 'ok' as const,
      (error: { code: number; details: string }) => ({ code: error.code, details: error.details }),
    );

  beforeAll(async () => {
    assertServiceBuilt();
    key = await signingKey('ES256');
    db = await freshSchema('own_search');
    const kafka = testKafka();
    const { topic } = await freshTopic(kafka, 2);
    producer = await connectedProducer(kafka);
    port = await freePort();
    service = spawnService({
      topic,
      schema: db.schema,
      groupId: uniqueName('g'),
      env: {
        SERVICE_ROLES: 'recorder,grpc',
        GRPC_PORT: String(port),
        GRPC_HOST: '127.0.0.1',
        GRPC_TLS_CERT_FILE: certs.serverCert,
        GRPC_TLS_KEY_FILE: certs.serverKey,
        AUTH_JWKS_FILE: writeKeySet([key]),
        AUTH_ISSUER: TEST_ISSUER,
        AUTH_AUDIENCE: TEST_AUDIENCE,
      },
    });
    const probe = toolHistoryClient(port, { tls });
    clients.push(probe);
    await waitFor(
      () => probe.healthCheck().catch(() => 'DOWN'),
      (state) => state === 'SERVING',
      { what: 'health SERVING over TLS', timeoutMs: 60_000 },
    );
    const recent = (s: number) => new Date(Date.now() - 60_000 + s * 1000).toISOString();
    const conversation = (tenantId: string, conversationId: string, appliance: string) => {
      const scope = { tenantId, conversationId, runId: 'r1' };
      return [
        toolCall(scope, {
          roundIndex: 0,
          sequenceIndex: 0,
          toolName: 'boil_water',
          arguments: { appliance } as never,
          occurredAt: recent(0),
        }),
        toolResult(scope, { roundIndex: 0, sequenceIndex: 0, result: `the ${appliance} clicked off` as never, occurredAt: recent(1) }),
        toolCall(scope, {
          roundIndex: 1,
          sequenceIndex: 0,
          toolName: 'kettlebell_log',
          arguments: { sets: 3 } as never,
          occurredAt: recent(2),
        }),
        toolResult(scope, { roundIndex: 1, sequenceIndex: 0, result: { done: true } as never, occurredAt: recent(3) }),
        runCompleted(scope, { occurredAt: recent(4) }),
      ];
    };
    await publishEvents(producer, topic, [
      ...conversation(acme, mine, 'Kettle'),
      ...conversation(acme, theirs, 'kettle'),
      ...conversation(globex, mine, 'kettle'),
    ]);
    const auditor = await clientWith({ tenants: [acme, globex], scope: 'audit:read' });
    // Searchable once the search projection has followed the recording.
    await waitFor(
      async () =>
        (await auditor.searchToolHistory({ tenant_id: acme, query: 'kett', match: SearchMatch.SEARCH_MATCH_SUBSTRING })).hits ?? [],
      (hits) => hits.length === 4,
      { what: 'the seeded invocations searchable', timeoutMs: 60_000 },
    );
  });

  afterAll(async () => {
    for (const client of clients) client.close();
    await producer?.disconnect();
    if (service) await stopService(service);
    await db?.drop();
  });

  it('lets history:read search its conversation by substring, inside a word, and says where it matched', async () => {
    const agent = await clientWith({ tenants: [acme], scope: 'history:read' });
    const { hits } = await agent.searchToolHistory({
      tenant_id: acme,
      conversation_id: mine,
      query: 'kett',
      match: SearchMatch.SEARCH_MATCH_SUBSTRING,
    });
    expect(
      hits?.map((h) => ({
        tool: h.invocation?.tool_name,
        conversation: h.invocation?.conversation_id,
        matched: h.matched_in,
        score: h.score,
      })),
    ).toEqual([
      { tool: 'kettlebell_log', conversation: mine, matched: ['SEARCH_HIT_FIELD_TOOL_NAME'], score: 0 },
      { tool: 'boil_water', conversation: mine, matched: ['SEARCH_HIT_FIELD_ARGUMENTS', 'SEARCH_HIT_FIELD_RESULT'], score: 0 },
    ]);
    expect(hits?.[1].snippet).toBe('{"appliance":"**Kett**le"} … the **Kett**le clicked off');
    // Words, as before: whole words only, with where they matched.
    const words = await agent.searchToolHistory({ tenant_id: acme, conversation_id: mine, query: 'kettle' });
    expect(words.hits?.map((h) => [h.invocation?.tool_name, h.matched_in])).toEqual([
      ['boil_water', ['SEARCH_HIT_FIELD_ARGUMENTS', 'SEARCH_HIT_FIELD_RESULT']],
    ]);
  });

  it('refuses history:read a search of the whole tenant, or of another tenant', async () => {
    const agent = await clientWith({ tenants: [acme], scope: 'history:read' });
    expect(await outcome(agent.searchToolHistory({ tenant_id: acme, query: 'kett', match: SearchMatch.SEARCH_MATCH_SUBSTRING }))).toEqual({
      code: status.PERMISSION_DENIED,
      details: 'permission denied: SearchToolHistory with history:read needs conversation_id (all of a tenant needs the scope audit:read)',
    });
    expect(
      await outcome(
        agent.searchToolHistory({ tenant_id: globex, conversation_id: mine, query: 'kett', match: SearchMatch.SEARCH_MATCH_SUBSTRING }),
      ),
    ).toEqual({ code: status.PERMISSION_DENIED, details: `permission denied: tenant "${globex}" is not permitted to this caller` });
  });

  it('lets audit:read search the whole tenant, and refuses a substring too short to search', async () => {
    const auditor = await clientWith({ tenants: [acme], scope: 'audit:read' });
    const { hits } = await auditor.searchToolHistory({ tenant_id: acme, query: 'KETTLE', match: SearchMatch.SEARCH_MATCH_SUBSTRING });
    expect(new Set(hits?.map((h) => h.invocation?.conversation_id))).toEqual(new Set([mine, theirs]));
    expect(hits?.every((h) => h.invocation?.tenant_id === acme)).toBe(true);
    expect(await outcome(auditor.searchToolHistory({ tenant_id: acme, query: 'ke', match: SearchMatch.SEARCH_MATCH_SUBSTRING }))).toEqual({
      code: status.INVALID_ARGUMENT,
      details: 'query must be at least 3 characters to match as a substring',
    });
  });
});
