import type { Producer } from 'kafkajs';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { Client } from 'pg';
import type { ToolEvent } from '../libs/contract/src';
import { ToolHistoryClient, ToolHistoryError } from '../libs/client/src';
import { closedLoop, counterTotal, openLoop, replayCallers, type ReplayCallers, summarize } from './support/flood';
import { freePort, toolHistoryClient, type ToolHistoryTestClient } from './support/grpc-client';
import { connectedProducer, publishEvents, testKafka } from './support/kafka-fixtures';
import { type RunningStack, startRunningStack } from './support/running-stack';
import { TEST_DATABASE_URL, uniqueName } from './support/test-environment';
import { agentTraffic } from './support/traffic';
import { runCompleted, toolCall, toolResult } from './support/tool-event-factory';
import { waitFor } from './support/wait-for';

/** A conversation of `turns` completed runs, each of one round of two calls with ~1 KB results, all recent. */
function conversation(tenantId: string, conversationId: string, turns: number): ToolEvent[] {
  const body = 'order A-1001 shipped via DHL, parcel in transit, expected delivery Tuesday. '.repeat(26);
  const at = (run: number, s: number) => new Date(Date.now() - 120_000 + run * 5_000 + s * 1_000).toISOString();
  return Array.from({ length: turns }, (_, run) => {
    const scope = { tenantId, conversationId, runId: `run-${run}`, channel: 'web' };
    return [
      ...[0, 1].map((s) => toolCall(scope, { roundIndex: 0, sequenceIndex: s, toolCallId: `call_${run}_${s}`, occurredAt: at(run, 0) })),
      ...[0, 1].map((s) =>
        toolResult(scope, {
          roundIndex: 0,
          sequenceIndex: s,
          toolCallId: `call_${run}_${s}`,
          result: { summary: body },
          occurredAt: at(run, 1),
        }),
      ),
      runCompleted(scope, { assistantMessageId: `msg-${run}`, occurredAt: at(run, 2) }),
    ];
  }).flat();
}

/**
 * A service whose replays can be held at the database: one replay at a time
 * (ADMISSION_REPLAY_* as `admission` says), no cache, so every admitted
 * replay reads PostgreSQL; `count` grpc-js callers that send no tenant
 * header; the client package (`clientOptions`); a connection that locks the
 * read model; and its metrics.
 */
function lockableService(name: string, admission: Record<string, string>, count: number, clientOptions: { maxAttempts?: number } = {}) {
  const service = {} as {
    stack: RunningStack;
    callers: ReplayCallers;
    client: ToolHistoryClient;
    locker: Client;
    httpPort: number;
    /** The sum of a metric's samples of the replay lane (and `labels`). */
    replayMetric(name: string, labels?: Record<string, string>): Promise<number>;
    /** Replay reads block at the database from now until the transaction ends (COMMIT). */
    lockReads(): Promise<void>;
  };
  beforeAll(async () => {
    service.httpPort = await freePort();
    service.stack = await startRunningStack(name, {
      env: { HTTP_PORT: String(service.httpPort), REPLAY_CACHE_MB: '0', ADMISSION_REPLAY_MAX_IN_FLIGHT: '1', ...admission },
    });
    service.callers = replayCallers(Number(service.stack.address.split(':')[1]), count);
    service.client = new ToolHistoryClient({
      address: service.stack.address,
      ...(clientOptions.maxAttempts === undefined ? {} : { retry: { maxAttempts: clientOptions.maxAttempts } }),
    });
    service.locker = new Client({ connectionString: TEST_DATABASE_URL });
    await service.locker.connect();
  });
  afterAll(async () => {
    await service.locker?.query('ROLLBACK').catch(() => undefined);
    await service.locker?.end();
    service.client?.close();
    service.callers?.close();
    await service.stack?.stop();
  });
  service.replayMetric = async (metricName, labels = {}) =>
    counterTotal(await (await fetch(`http://127.0.0.1:${service.httpPort}/metrics`)).text(), metricName, { lane: 'replay', ...labels });
  service.lockReads = async () => {
    await service.locker.query('BEGIN');
    await service.locker.query(`LOCK TABLE "${service.stack.db.schema}".conversations IN ACCESS EXCLUSIVE MODE`);
  };
  return service;
}

describe('a read whose caller went away is dropped before it reaches the database, and a running read is cancelled', () => {
  // A queue that waits long.
  const service = lockableService('dropped', { ADMISSION_REPLAY_MAX_QUEUED: '8', ADMISSION_REPLAY_MAX_QUEUE_WAIT_MS: '60000' }, 3);
  const tenant_id = uniqueName('tenant');

  const admission = (outcome: string) => service.replayMetric('toolhistory_admission_calls_total', { outcome });
  const gauge = (name: string) => service.replayMetric(name);
  /** Statements of the service waiting for the test's lock on this schema's conversations: replay reads that reached the database. */
  const readsAtTheDatabase = async () =>
    (
      await service.locker.query<{ waiting: number }>(
        `SELECT count(*)::int AS waiting FROM pg_locks l JOIN pg_class c ON c.oid = l.relation JOIN pg_namespace n ON n.oid = c.relnamespace
         WHERE n.nspname = $1 AND c.relname = 'conversations' AND NOT l.granted`,
        [service.stack.db.schema],
      )
    ).rows[0].waiting;

  it('never admits a waiting call cancelled or past its deadline, and cancels the statement of one its caller left', async () => {
    const { callers } = service;
    // Reads block on this lock: each one that reaches the database is seen waiting for it.
    await service.lockReads();

    const running = callers.start(0, { tenant_id, conversation_id: 'a' }, 60_000);
    await waitFor(readsAtTheDatabase, (n) => n === 1, { what: 'the first read waiting at the database' });

    // The one slot is taken: these wait in the queue.
    const cancelled = callers.start(1, { tenant_id, conversation_id: 'b' }, 60_000);
    const late = callers.start(2, { tenant_id, conversation_id: 'late' }, 300);
    await waitFor(
      () => gauge('toolhistory_admission_queued'),
      (n) => n === 2,
      { what: 'two calls waiting for the slot' },
    );
    cancelled.cancel();
    expect(await cancelled.outcome).toMatchObject({ code: 'CANCELLED' });
    expect(await late.outcome).toMatchObject({ outcome: 'deadline' });
    await waitFor(
      () => admission('dropped'),
      (n) => n === 2,
      { what: 'both waiting calls dropped' },
    );
    expect(await gauge('toolhistory_admission_queued')).toBe(0);

    // The caller of the running read goes away: its statement is cancelled at the database, the lock still held.
    running.cancel();
    expect(await running.outcome).toMatchObject({ code: 'CANCELLED' });
    await waitFor(readsAtTheDatabase, (n) => n === 0, { what: "the abandoned read's statement cancelled" });
    await waitFor(
      () => gauge('toolhistory_admission_in_flight'),
      (n) => n === 0,
      { what: 'the slot free' },
    );

    // The next call takes the slot and is the only read at the database: the dropped ones never got there.
    const next = callers.start(0, { tenant_id, conversation_id: 'c' }, 60_000);
    await waitFor(readsAtTheDatabase, (n) => n === 1, { what: 'the next read waiting at the database' });
    expect(await admission('admitted')).toBe(2);
    await service.locker.query('COMMIT');
    expect(await next.outcome).toEqual({ outcome: 'answered', code: 'OK' });
    expect([await admission('admitted'), await admission('dropped')]).toEqual([2, 2]);
  });
});

describe('a read the service would refuse at once is refused from its headers, before grpc-js makes a call of it', () => {
  // Two may wait; the client package (which sends the tenant header) tries once.
  const service = lockableService('atstream', { ADMISSION_REPLAY_MAX_QUEUED: '2', ADMISSION_REPLAY_MAX_QUEUE_WAIT_MS: '60000' }, 3, {
    maxAttempts: 1,
  });
  const flood = uniqueName('flood');
  const quiet = uniqueName('quiet');

  const atTheStream = () => service.replayMetric('toolhistory_admission_refused_at_stream_total');
  const refused = (reason: string) => service.replayMetric('toolhistory_admission_refusals_total', { reason });
  const queued = () => service.replayMetric('toolhistory_admission_queued');

  it('refuses the flooding tenant at the stream, lets another tenant take its place, and leaves header-less calls to the interceptor', async () => {
    const { callers, client } = service;
    await service.lockReads();
    // The flooding tenant holds the slot and fills the queue.
    const held = [0, 1, 2].map((i) => callers.start(i, { tenant_id: flood, conversation_id: `held-${i}` }, 60_000));
    await waitFor(queued, (n) => n === 2, { what: 'the queue full of the flooding tenant' });

    // Its next read, named in the headers: refused at the stream, with when to come back.
    const error = await client.getReplayHistory({ tenantId: flood, conversationId: 'more', format: 'openai' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ToolHistoryError);
    expect(error).toMatchObject({ status: 'RESOURCE_EXHAUSTED', retryAfterMs: expect.any(Number) });
    expect((error as ToolHistoryError).message).toContain('no free slot and no room to wait');
    expect([await atTheStream(), await refused('full')]).toEqual([1, 1]);

    // The same read without the header: refused as before, by the interceptor once its request is read.
    expect(await callers.start(0, { tenant_id: flood, conversation_id: 'bare' }, 60_000).outcome).toMatchObject({ outcome: 'refused' });
    expect([await atTheStream(), await refused('full')]).toEqual([1, 2]);

    // A quiet tenant is not refused at the stream: it takes the flooding tenant's newest place in the queue.
    const quietRead = client.getReplayHistory({ tenantId: quiet, conversationId: 'q', format: 'openai', timeoutMs: 60_000 });
    await waitFor(
      () => refused('shed'),
      (n) => n === 1,
      { what: "the flooding tenant's newest call shed" },
    );
    expect(await atTheStream()).toBe(1);

    await service.locker.query('COMMIT');
    await expect(quietRead).resolves.toMatchObject({ turns: [] });
    const outcomes = await Promise.all(held.map((call) => call.outcome));
    expect(outcomes.map((o) => o.outcome).sort()).toEqual(['answered', 'answered', 'refused']);
  });
});

describe("the client package honours a busy refusal's pushback", () => {
  // No queue: a second replay is refused at once.
  const service = lockableService('pushback', { ADMISSION_REPLAY_MAX_QUEUED: '0' }, 1);
  const tenantId = uniqueName('tenant');

  const refusals = () => service.replayMetric('toolhistory_admission_calls_total', { outcome: 'refused' });
  /** Holds the one replay slot with a read blocked at the database, until `release`. */
  const holdTheSlot = async () => {
    await service.lockReads();
    const held = service.callers.start(0, { tenant_id: tenantId, conversation_id: 'held' }, 60_000);
    await waitFor(
      () => service.replayMetric('toolhistory_admission_in_flight'),
      (n) => n === 1,
      { what: 'the slot held' },
    );
    return { release: () => service.locker.query('COMMIT'), held };
  };

  it('tries again after the pushback and is answered once there is room', async () => {
    const { release, held } = await holdTheSlot();
    const before = await refusals();
    // As many attempts as its deadline allows, so it is still trying when the slot frees.
    const patient = new ToolHistoryClient({ address: service.stack.address, retry: { maxAttempts: 10_000 } });
    try {
      const answer = patient.getReplayHistory({ tenantId, conversationId: 'c', format: 'openai', timeoutMs: 30_000 });
      await waitFor(refusals, (n) => n >= before + 2, { what: 'attempts refused, and tried again' });
      await release();
      expect(await held.outcome).toMatchObject({ outcome: 'answered' });
      await expect(answer).resolves.toMatchObject({ turns: [] });
    } finally {
      patient.close();
    }
  });

  it('gives up within its deadline with the refusal, which says when to come back', async () => {
    const { release, held } = await holdTheSlot();
    const before = await refusals();
    const error = await service.client
      .getReplayHistory({ tenantId, conversationId: 'c', format: 'openai', timeoutMs: 1_000 })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ToolHistoryError);
    expect(error).toMatchObject({ status: 'RESOURCE_EXHAUSTED', retriable: true, retryAfterMs: expect.any(Number) });
    // At most three attempts, each refused.
    const attempts = (await refusals()) - before;
    expect(attempts).toBeGreaterThanOrEqual(1);
    expect(attempts).toBeLessThanOrEqual(3);
    await release();
    await held.outcome;
  });
});

describe('a flood of replays at three times what the service sustains, beside ingest (loopback, bounded in time)', () => {
  const FLOOD_SECONDS = 8;
  const DEADLINE_MS = 2_000;
  const TURNS = 30;
  let stack: RunningStack;
  let producer: Producer;
  let callers: ReplayCallers;
  let health: ToolHistoryTestClient;
  let httpPort: number;
  const tenant_id = uniqueName('tenant');
  const conversation_id = 'flooded';
  // Read from the database and computed each time (no cache), with little to send back (every result is past the
  // request's freshness window): the service's work per call far exceeds its callers', so the test's own callers,
  // on the same small machine, can offer three times what the service sustains.
  const request = { tenant_id, conversation_id, freshness_window_seconds: '1' };
  const fullRequest = { tenant_id, conversation_id };

  const scrape = async () => (await fetch(`http://127.0.0.1:${httpPort}/metrics`)).text();

  beforeAll(async () => {
    httpPort = await freePort();
    // At info, the log says when a search projection held its batch (ADR 039).
    stack = await startRunningStack('flood', { env: { HTTP_PORT: String(httpPort), REPLAY_CACHE_MB: '0', LOG_LEVEL: 'info' } });
    producer = await connectedProducer(testKafka());
    const port = Number(stack.address.split(':')[1]);
    callers = replayCallers(port, 8);
    health = toolHistoryClient(port);
    await publishEvents(producer, stack.topic, conversation(tenant_id, conversation_id, TURNS));
    await waitFor(
      () => health.getReplayHistory(fullRequest).catch(() => ({ turns: [] })),
      (r) => r.turns.length === TURNS,
      { what: 'the conversation replayable' },
    );
  });

  afterAll(async () => {
    callers?.close();
    health?.close();
    await producer?.disconnect();
    await stack?.stop();
  });

  it('refuses what it cannot take quickly, with a pushback; stays SERVING; keeps recording; recovers', async () => {
    const oneCall = (i: number) => callers.call(i, request, DEADLINE_MS);
    await closedLoop(8, 1, oneCall);
    const measured = await closedLoop(8, 3, oneCall);
    const capacity = summarize(measured.results).answered / measured.elapsedSeconds;
    const rate = Math.max(300, Math.round(3 * capacity));

    // Health as an orchestrator probes it, and ingest of other conversations, while the flood lasts.
    const probes: string[] = [];
    const readiness = new Set<string>();
    const overloadReadiness = new Set<string>();
    const ready = async (path: string) => {
      const response = await fetch(`http://127.0.0.1:${httpPort}${path}`).catch(() => undefined);
      return response ? `${response.status} ${(await response.text()).trim()}` : 'failed';
    };
    let flooding = true;
    const probing = (async () => {
      while (flooding) {
        probes.push(await health.healthCheck().catch((e: Error) => `failed: ${e.message}`));
        readiness.add(await ready('/readyz'));
        overloadReadiness.add(await ready('/readyz?overload=unready'));
        await new Promise((r) => setTimeout(r, 250));
      }
    })();
    const ingested = [...agentTraffic(1_200, { seed: 35, tenants: 3, conversations: 200 })];
    const ingestTenants = [...new Set(ingested.map((e) => e.tenantId))];
    const ingesting = (async () => {
      for (let i = 0; i < ingested.length; i += 100) {
        await publishEvents(producer, stack.topic, ingested.slice(i, i + 100));
        await new Promise((r) => setTimeout(r, (FLOOD_SECONDS * 1000) / 15));
      }
    })();
    // How late the service's and this process's event loops ran (a scrape resets the service's figures): a failure
    // says whether the service was slow, or this test's own callers were.
    await scrape();
    const lag = monitorEventLoopDelay({ resolution: 10 });
    lag.enable();
    const results = await openLoop(rate, FLOOD_SECONDS, oneCall);
    lag.disable();
    const eventLoopDelayP99Ms = {
      service: Math.round(counterTotal(await scrape(), 'nodejs_eventloop_lag_p99_seconds') * 1000),
      test: Math.round(lag.percentile(99) / 1e6),
    };
    flooding = false;
    await Promise.all([probing, ingesting]);

    const flood = summarize(results);
    const refusedByAdmission = counterTotal(await scrape(), 'toolhistory_admission_refusals_total', { lane: 'replay' });
    // One object, so a failure shows every figure of the flood beside the check that failed.
    // How fast refusals arrive and how many calls ran out their deadline depend on how busy this machine is: they are
    // figures (printed here on a failure, measured by npm run bench:overload), not checks.
    const figures = { capacity: Math.round(capacity), rate, ...flood, eventLoopDelayP99Ms, probes, refusedByAdmission };
    expect({
      figures,
      // Past capacity, calls were refused by admission control (not left to their deadline), each with when to come back.
      refusedSome: flood.refused > 0,
      refusedByAdmission: refusedByAdmission >= flood.refused,
      everyRefusalWithPushback: flood.refusalsWithPushback === flood.refused,
      // No call failed another way (no connection dropped).
      otherFailures: flood.otherCodes,
      answeredSome: flood.answered > 0,
      // Health never said NOT_SERVING: the database and the broker were up all along.
      probed: probes.length > 0,
      probesNotServing: probes.filter((p) => p === 'NOT_SERVING'),
      // Readiness stays as health says; the opt-in overload signal told a router to send elsewhere meanwhile.
      readiness: [...readiness],
      overloadSignalled: overloadReadiness.has('503 OVERLOADED'),
    }).toEqual({
      figures,
      refusedSome: true,
      refusedByAdmission: true,
      everyRefusalWithPushback: true,
      otherFailures: {},
      answeredSome: true,
      probed: true,
      probesNotServing: [],
      readiness: ['200 SERVING'],
      overloadSignalled: true,
    });

    // Every event published during the flood is recorded.
    await waitFor(
      async () =>
        (await stack.db.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM events WHERE tenant_id = ANY($1)', [ingestTenants]))
          .rows[0].n,
      (n) => n === ingested.length,
      { what: 'every event published during the flood recorded', timeoutMs: 60_000 },
    );

    // Search held its batches while reads were refused (ADR 039), then caught up: every invocation recorded during
    // the flood has its word and substring documents.
    await waitFor(
      async () => stack.service.output().includes('projection held its batch while reads were refused'),
      (held) => held,
      { what: 'a search projection held its batch during the flood' },
    );
    const countOf = async (table: string) =>
      (await stack.db.pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${table} WHERE tenant_id = ANY($1)`, [ingestTenants]))
        .rows[0].n;
    const invocations = await countOf('invocations');
    expect(invocations).toBeGreaterThan(0);
    await waitFor(
      async () => [await countOf('invocation_search'), await countOf('invocation_substring')],
      (documents) => documents.every((n) => n === invocations),
      { what: 'search caught up after the flood', timeoutMs: 60_000 },
    );

    // Recovery: nothing left in flight or waiting, and light load is answered in full.
    await waitFor(
      async () => {
        const exposition = await scrape();
        return counterTotal(exposition, 'toolhistory_admission_in_flight') + counterTotal(exposition, 'toolhistory_admission_queued');
      },
      (n) => n === 0,
      { what: 'admission drained' },
    );
    for (let i = 0; i < 10; i += 1) expect((await health.getReplayHistory(fullRequest)).turns).toHaveLength(TURNS);
    await waitFor(
      () => ready('/readyz?overload=unready'),
      (r) => r === '200 SERVING',
      { what: 'the overload signal cleared' },
    );
    expect(stack.service.child.exitCode).toBeNull();
  });
});
