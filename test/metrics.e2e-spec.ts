import type { Producer } from 'kafkajs';
import { get as httpGet } from 'node:http';
import { Readable } from 'node:stream';
import { getMetricsFromStream, type PromHistogramData, type PromMetric } from 'prom2javascript';
import { freePort, toolHistoryClient, ToolHistoryTestClient } from './support/grpc-client';
import { connectedProducer, publishEvents, testKafka } from './support/kafka-fixtures';
import { uniqueName } from './support/test-environment';
import { runCompleted, toolCall, toolResult } from './support/tool-event-factory';
import { type RunningStack, startRunningStack } from './support/running-stack';
import { waitFor } from './support/wait-for';

/** One sample of a family as the parser reads it: a value, or a histogram's count and buckets. */
type Sample = { labels: Record<string, string>; value?: number; count?: number; buckets?: Record<string, number> };

describe('metrics and probes over HTTP, after recording and replaying (real broker, real gRPC server)', () => {
  let stack: RunningStack;
  let producer: Producer;
  let client: ToolHistoryTestClient;
  let topic: string;
  let httpPort: number;
  const tenantId = uniqueName('tenant');
  const conversationId = uniqueName('conv');
  const scope = { tenantId, conversationId, runId: 'r1', channel: 'support' };
  const recent = (s: number) => new Date(Date.now() - 60_000 + s * 1000).toISOString();
  const events = [
    toolCall(scope, { roundIndex: 0, sequenceIndex: 0, toolCallId: 'c1', toolName: 'lookup_customer', occurredAt: recent(0) }),
    toolResult(scope, {
      roundIndex: 0,
      sequenceIndex: 0,
      toolCallId: 'c1',
      result: { contact: 'pat@example.org', plan: 'gold' },
      occurredAt: recent(1),
    }),
    runCompleted(scope, { occurredAt: recent(2) }),
  ];

  const http = (path: string) => fetch(`http://127.0.0.1:${httpPort}${path}`);
  const scrape = async (): Promise<Map<string, PromMetric>> => {
    const response = await http('/metrics');
    expect(response.status).toBe(200);
    // The text exposition format, version 0.0.4 (parameters in any order).
    expect(response.headers.get('content-type')).toMatch(/^text\/plain;(.*;)? ?version=0\.0\.4\b/);
    // prom-client writes NaN (an event-loop statistic before its first sample) as `Nan`, which Prometheus
    // reads (its float parser ignores case) and this parser knows in no spelling: those samples are set
    // aside, and must be the only ones.
    const lines = (await response.text()).split('\n');
    const notANumber = lines.filter((line) => /^[^#].* Nan$/.test(line));
    expect(notANumber.filter((line) => !line.startsWith('nodejs_eventloop_lag_'))).toEqual([]);
    const families = await getMetricsFromStream(Readable.from([lines.filter((line) => !notANumber.includes(line)).join('\n')]));
    // Every sample belongs to a family declared with its type and help: nothing the parser had to guess.
    for (const [name, family] of Object.entries(families)) expect([name, family.type]).not.toEqual([name, 'unknown']);
    return new Map(Object.entries(families));
  };
  const samples = (families: Map<string, PromMetric>, name: string): Sample[] => (families.get(name)?.data ?? []) as Sample[];
  const sample = (families: Map<string, PromMetric>, name: string, labels: Record<string, string> = {}) =>
    samples(families, name).find((m) => Object.entries(labels).every(([k, v]) => m.labels[k] === v));

  beforeAll(async () => {
    httpPort = await freePort();
    stack = await startRunningStack('metrics', { env: { HTTP_PORT: String(httpPort) } });
    ({ topic } = stack);
    producer = await connectedProducer(testKafka());
    client = toolHistoryClient(Number(stack.address.split(':')[1]));
  });

  afterAll(async () => {
    client?.close();
    await stack?.stop();
    await producer?.disconnect();
  });

  it('answers the probes without a token, as grpc.health.v1 does', async () => {
    const live = await http('/livez');
    expect([live.status, await live.text()]).toEqual([200, 'live\n']);
    const ready = await http('/readyz');
    expect([ready.status, await ready.text()]).toEqual([200, 'SERVING\n']);
    expect((await http('/nothing-here')).status).toBe(404);
  });

  it('without authentication, answers data routes only when addressed by IP address or localhost (no DNS rebinding)', async () => {
    const statusFor = (path: string, host: string) =>
      new Promise<number>((resolve, reject) => {
        const request = httpGet({ host: '127.0.0.1', port: httpPort, path, headers: { host } }, (response) => {
          response.resume();
          resolve(response.statusCode ?? 0);
        });
        request.on('error', reject);
      });
    expect(await statusFor('/metrics', `attacker.example:${httpPort}`)).toBe(403);
    expect(await statusFor('/api/v1/me', `attacker.example:${httpPort}`)).toBe(403);
    expect(await statusFor('/livez', `attacker.example:${httpPort}`)).toBe(200);
    expect(await statusFor('/metrics', `localhost:${httpPort}`)).toBe(200);
    expect(await statusFor('/api/v1/me', `127.0.0.1:${httpPort}`)).toBe(200);
  });

  it('counts what was recorded, dead-lettered, redacted and replayed, in a format Prometheus parses, with no ids as labels', async () => {
    await publishEvents(producer, topic, events);
    await producer.send({ topic, messages: [{ key: conversationId, value: 'not json' }] });
    await waitFor(
      async () => sample(await scrape(), 'toolhistory_dead_letters_total', { code: 'NOT_JSON' })?.value,
      (v) => v === 1,
      { what: 'the poison message counted' },
    );
    await waitFor(
      () => client.getReplayHistory({ tenant_id: tenantId, conversation_id: conversationId }),
      (r) => r.turns.length === 1,
      { what: 'the run replayed' },
    );
    await client.getReplayHistory({ tenant_id: tenantId, conversation_id: conversationId });

    const families = await scrape();
    expect(sample(families, 'toolhistory_events_recorded_total', { type: 'ToolCallRequested' })?.value).toBe(1);
    expect(sample(families, 'toolhistory_events_recorded_total', { type: 'ToolResultReceived' })?.value).toBe(1);
    expect(sample(families, 'toolhistory_events_recorded_total', { type: 'RunCompleted' })?.value).toBe(1);
    expect(sample(families, 'toolhistory_redactions_total', { kind: 'email' })?.value).toBe(1);
    expect(Number(sample(families, 'toolhistory_recorder_batch_duration_seconds', { outcome: 'recorded' })?.count)).toBeGreaterThan(0);

    const replays = sample(families, 'toolhistory_grpc_server_handling_seconds', {
      method: '/toolhistory.v1.ToolHistory/GetReplayHistory',
      code: 'OK',
    });
    expect(Number(replays?.count)).toBeGreaterThanOrEqual(2);
    // Every replay was admitted (none waited, none was refused), and nothing is in flight or waiting now.
    const replayed = Number(replays?.count);
    expect(sample(families, 'toolhistory_admission_calls_total', { lane: 'replay', outcome: 'admitted' })?.value).toBe(replayed);
    expect(samples(families, 'toolhistory_admission_refusals_total')).toEqual([]);
    expect(sample(families, 'toolhistory_admission_in_flight', { lane: 'replay' })?.value).toBe(0);
    expect(sample(families, 'toolhistory_admission_queued', { lane: 'audit' })?.value).toBe(0);
    expect(sample(families, 'toolhistory_admission_retry_after_ms', { lane: 'replay' })?.value).toBeGreaterThan(0);
    expect(families.get('toolhistory_grpc_server_handling_seconds')?.type).toBe('histogram');
    expect((replays as PromHistogramData).buckets['+Inf']).toBe(replays?.count);
    expect(Number(sample(families, 'toolhistory_replay_requests_total', { answer: 'cached_history' })?.value)).toBeGreaterThanOrEqual(1);
    expect(sample(families, 'toolhistory_replay_change_feed_current')?.value).toBe(1);
    expect(Number(sample(families, 'toolhistory_replay_cache_bytes')?.value)).toBeGreaterThan(0);
    expect(sample(families, 'toolhistory_subscriptions_open')?.value).toBe(0);
    expect(samples(families, 'toolhistory_db_pool_connections')).toHaveLength(6);
    expect(sample(families, 'process_cpu_seconds_total')).toBeDefined();

    // Every partition's lag is there; once all is recorded, each is 0.
    const lag = await waitFor(
      async () => samples(await scrape(), 'toolhistory_consumer_lag_messages'),
      (m) => m.length === 3 && m.every((s) => s.value === 0),
      { what: 'the consumer lag of every partition at 0' },
    );
    expect(lag.map((s) => s.labels)).toEqual(expect.arrayContaining([{ topic, partition: '0' }]));
    // One series per search projection: words ('search') and substrings, each caught up on its own.
    for (const projection of ['search', 'substring']) {
      await waitFor(
        async () => sample(await scrape(), 'toolhistory_projection_lag_events', { projection })?.value,
        (v) => v === 0,
        { what: `the ${projection} projection caught up` },
      );
    }

    // Bounded labels: no conversation or run anywhere in the exposition; a tenant only in the admission counts
    // (at most ADMISSION_METRICS_TENANTS of them by name), where its replay was admitted.
    const text = await (await http('/metrics')).text();
    expect(text).not.toContain(conversationId);
    expect(text.split('\n').filter((line) => line.includes(tenantId))).toEqual([
      `toolhistory_admission_calls_total{lane="replay",tenant="${tenantId}",outcome="admitted"} ${replayed}`,
    ]);
    const labelsOf = (name: string) => new Set(samples(families, name).flatMap((m) => Object.keys(m.labels)));
    for (const [name] of families) {
      const forbidden = [
        'tenant_id',
        'conversation',
        'conversation_id',
        'run',
        'run_id',
        ...(name === 'toolhistory_admission_calls_total' ? [] : ['tenant']),
      ];
      expect([name, [...labelsOf(name)].filter((label) => forbidden.includes(label))]).toEqual([name, []]);
    }
  });
});
