/**
 * Read-your-writes benchmark: what a consistency token costs.
 *
 *   npm run bench:consistency -- [--requests 2000] [--blocks 10] [--waits 300] [--turns 20] [--keep]
 *
 * Starts the built service (recorder and gRPC in one process) on a fresh
 * topic and schema, and records one conversation of --turns completed runs
 * (2 rounds of 2 calls, results ~1 KB) through the client package's publisher.
 *
 * 1. Already recorded: --requests GetReplayHistory calls in sequence, half
 *    with the conversation's last token (recorded long before) and half
 *    without, in --blocks alternating blocks, so both meet the same machine;
 *    p50 and p99 of each, and the service's CPU per request in each.
 * 2. Waiting: --waits times, publish one small run and read it at once with
 *    its token: the time from the publish's acknowledgement to the answer,
 *    and from the commit of the run's last event (its recorded_at) to the
 *    answer: how long a read that had to wait takes past the recording.
 *
 * The last line printed is one JSON object.
 */
import { ToolEventPublisher, ToolHistoryClient } from '../libs/client/src';
import { freePort } from '../test/support/grpc-client';
import {
  benchKafka,
  benchDatabaseUrl,
  cpuSeconds,
  createBenchTopics,
  intOption,
  parseArgs,
  percentile,
  sleep,
  spawnBenchRecorder,
  teardownBench,
} from './bench-support';
import { createPool, runMigrations } from '../libs/persistence/src';

const BROKERS = (process.env.BENCH_KAFKA_BROKERS ?? '127.0.0.1:9092').split(',');
const TENANT = 'bench-tenant';
const BODY = 'order A-1001 shipped via DHL, parcel in transit, expected delivery Tuesday. '.repeat(13);

const ms = (sorted: readonly number[], p: number) => Number(percentile(sorted, p).toFixed(2));

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      requests: { type: 'string' },
      blocks: { type: 'string' },
      waits: { type: 'string' },
      turns: { type: 'string' },
      keep: { type: 'boolean' },
    },
  });
  const requests = intOption(values, 'requests', 2_000);
  const blocks = intOption(values, 'blocks', 10);
  const waits = intOption(values, 'waits', 300);
  const turns = intOption(values, 'turns', 20);
  const stamp = Date.now().toString(36);
  const topic = `bench-consistency-${stamp}`;
  const schema = `bench_consistency_${stamp}`;
  const databaseUrl = await benchDatabaseUrl();
  await runMigrations(databaseUrl, schema);
  const pool = createPool({ url: databaseUrl, schema, poolSize: 2, applicationName: 'toolhistory-bench' });
  const kafka = benchKafka(BROKERS);
  const admin = kafka.admin();
  await admin.connect();
  await createBenchTopics(admin, topic, 6);
  const port = await freePort();
  const service = spawnBenchRecorder({
    brokers: BROKERS,
    topic,
    groupId: `bench-${stamp}`,
    databaseUrl,
    schema,
    env: { SERVICE_ROLES: 'recorder,grpc', GRPC_PORT: String(port) },
  });
  const producer = kafka.producer();
  await producer.connect();
  const publisher = new ToolEventPublisher({ brokers: BROKERS, topic });
  await publisher.connect();
  const client = new ToolHistoryClient({ address: `127.0.0.1:${port}` });
  try {
    await service.seen('toolhistory started');
    const conversationId = `conv-${stamp}`;
    let token = '';
    for (let r = 0; r < turns; r += 1) {
      const run = publisher.run({ tenantId: TENANT, conversationId, channel: 'web', runId: `run-${r}`, userMessageId: `u-${r}` });
      for (let round = 0; round < 2; round += 1) {
        const calls = [0, 1].map((s) => ({
          roundIndex: round,
          sequenceIndex: s,
          toolCallId: `call_${r}_${round}_${s}`,
          toolName: 'lookup_order',
          arguments: { orderId: `A-${r}${round}${s}` },
        }));
        await run.toolCalls(calls);
        await run.toolResults(calls.map((c) => ({ ...c, result: { summary: BODY } })));
      }
      token = (await run.complete({ assistantMessageId: `a-${r}` })).consistencyToken;
    }
    // Recorded, and the cache warm: both kinds of request meet the same cached conversation.
    await client.getReplayHistory({ tenantId: TENANT, conversationId, format: 'openai', consistencyToken: token, timeoutMs: 30_000 });
    await sleep(500);

    const latencies = { withToken: [] as number[], withoutToken: [] as number[] };
    const cpu = { withToken: 0, withoutToken: 0 };
    const perBlock = Math.max(1, Math.floor(requests / blocks / 2));
    for (let b = 0; b < blocks * 2; b += 1) {
      const kind = b % 2 === 0 ? 'withToken' : 'withoutToken';
      const before = cpuSeconds(service.child.pid!);
      for (let i = 0; i < perBlock; i += 1) {
        const t = performance.now();
        await client.getReplayHistory({
          tenantId: TENANT,
          conversationId,
          format: 'openai',
          consistencyToken: kind === 'withToken' ? token : '',
        });
        latencies[kind].push(performance.now() - t);
      }
      cpu[kind] += cpuSeconds(service.child.pid!) - before;
    }
    for (const list of Object.values(latencies)) list.sort((a, b) => a - b);

    const sinceAck: number[] = [];
    const sinceCommit: number[] = [];
    for (let w = 0; w < waits; w += 1) {
      const waitingConversation = `wait-${stamp}-${w % 20}`;
      const run = publisher.run({ tenantId: TENANT, conversationId: waitingConversation, channel: 'web', runId: `run-${w}` });
      await run.toolCall({ roundIndex: 0, sequenceIndex: 0, toolCallId: `c${w}`, toolName: 'lookup_order', arguments: { w } });
      await run.toolResult({ roundIndex: 0, sequenceIndex: 0, toolCallId: `c${w}`, result: { w } });
      const published = await run.complete({ assistantMessageId: `a-${w}` });
      const acked = Date.now();
      const ackedAt = performance.now();
      await client.getReplayHistory({ tenantId: TENANT, conversationId: waitingConversation, format: 'openai' });
      const answeredAt = performance.now();
      const answered = acked + (answeredAt - ackedAt);
      sinceAck.push(answeredAt - ackedAt);
      const { rows } = await pool.query<{ at: string }>(
        `SELECT (extract(epoch FROM recorded_at) * 1000)::float8 AS at FROM events WHERE event_id = $1`,
        [published.eventId],
      );
      sinceCommit.push(answered - Number(rows[0].at));
    }
    sinceAck.sort((a, b) => a - b);
    sinceCommit.sort((a, b) => a - b);

    const summary = {
      alreadyRecorded: {
        requestsEach: latencies.withToken.length,
        withToken: {
          p50Ms: ms(latencies.withToken, 50),
          p99Ms: ms(latencies.withToken, 99),
          cpuMsPerRequest: Number(((cpu.withToken * 1000) / latencies.withToken.length).toFixed(3)),
        },
        withoutToken: {
          p50Ms: ms(latencies.withoutToken, 50),
          p99Ms: ms(latencies.withoutToken, 99),
          cpuMsPerRequest: Number(((cpu.withoutToken * 1000) / latencies.withoutToken.length).toFixed(3)),
        },
      },
      waitingReads: {
        reads: waits,
        fromAckToAnswer: { p50Ms: ms(sinceAck, 50), p99Ms: ms(sinceAck, 99), maxMs: ms(sinceAck, 100) },
        fromCommitToAnswer: { p50Ms: ms(sinceCommit, 50), p99Ms: ms(sinceCommit, 99), maxMs: ms(sinceCommit, 100) },
      },
    };
    console.log('already recorded (same conversation, cached), alternating blocks:');
    console.log(
      `  with a token:    p50 ${summary.alreadyRecorded.withToken.p50Ms} ms, p99 ${summary.alreadyRecorded.withToken.p99Ms} ms, ${summary.alreadyRecorded.withToken.cpuMsPerRequest} ms CPU/request`,
    );
    console.log(
      `  without a token: p50 ${summary.alreadyRecorded.withoutToken.p50Ms} ms, p99 ${summary.alreadyRecorded.withoutToken.p99Ms} ms, ${summary.alreadyRecorded.withoutToken.cpuMsPerRequest} ms CPU/request`,
    );
    console.log(
      `reads that waited (${waits}): from the publish's ack p50 ${summary.waitingReads.fromAckToAnswer.p50Ms} ms, p99 ${summary.waitingReads.fromAckToAnswer.p99Ms} ms;`,
    );
    console.log(
      `  from the commit of the last event p50 ${summary.waitingReads.fromCommitToAnswer.p50Ms} ms, p99 ${summary.waitingReads.fromCommitToAnswer.p99Ms} ms`,
    );
    console.log(JSON.stringify(summary));
  } finally {
    client.close();
    await publisher.disconnect();
    await teardownBench({ children: [service.child], producer, admin, topic, pool, databaseUrl, schema, keep: values.keep === true });
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
