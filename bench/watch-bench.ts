/**
 * Watch benchmark: the delay from an event's commit to the change reaching
 * the WatchConversation watchers, over gRPC on loopback.
 *
 *   npm run bench:watch -- [--events 300] [--watchers 20] [--conversations 10] [--long 2000] [--long-events 100] [--keep]
 *
 * Starts the built service (recorder and gRPC in one process) against a
 * fresh topic and schema. Each scenario opens its watchers, then publishes
 * --events events one after the other (a call, then its result, and so
 * on), each once every watcher has the change of the one before, and times
 * each event from three points: its publish to Kafka; its commit, as this
 * benchmark's own LISTEN on the read model's change channel sees it (the
 * recorder's transaction notifies at commit, the same notice the service's
 * watches wake on); its arrival at each watcher. Scenarios: 1 watcher; 20
 * watchers of one conversation; 20 watchers spread over 10 conversations;
 * then 1 and 20 watchers of a conversation that already has --long
 * invocations (called and answered, recorded through Kafka first), with
 * --long-events events each (fewer by default, so the run takes minutes;
 * `--long-events 300` gives the full run). The last line is one JSON object.
 */
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import { spawn } from 'node:child_process';
import { resolve } from 'node:path';
import { Partitioners, type Producer } from 'kafkajs';
import { Client as PgClient } from 'pg';
import type { ToolEvent } from '../libs/contract/src';
import { CONVERSATIONS_CHANGED_CHANNEL, createPool, runMigrations } from '../libs/persistence/src';
import { freePort } from '../test/support/grpc-client';
import {
  benchKafka,
  benchDatabaseUrl,
  benchServiceEnv,
  cpuSeconds,
  createBenchTopics,
  intOption,
  parseArgs,
  percentile,
  sleep,
  teardownBench,
} from './bench-support';

const BROKERS = (process.env.BENCH_KAFKA_BROKERS ?? '127.0.0.1:9092').split(',');
const PROTO = resolve(__dirname, '../../proto/toolhistory/v1/toolhistory.proto');
const TENANT = 'bench-tenant';
const RESULT_BODY = 'order A-1001 shipped via DHL, parcel in transit, expected delivery Tuesday. '.repeat(13);

interface ChangeMessage {
  snapshot?: { invocations: unknown[]; complete: boolean };
  invocation_changed?: { event_type: string; invocation: { invocation: { tool_call_id: string } } };
}

interface Figures {
  p50: number;
  p95: number;
  max: number;
}

const round1 = (n: number) => Number(n.toFixed(1));
const figuresOf = (values: number[]): Figures => {
  const sorted = [...values].sort((a, b) => a - b);
  return { p50: round1(percentile(sorted, 50)), p95: round1(percentile(sorted, 95)), max: round1(sorted[sorted.length - 1]) };
};
const show = (f: Figures) => `p50 ${f.p50} ms, p95 ${f.p95} ms, max ${f.max} ms`;

let eventNumber = 0;
function eventOf(conversationId: string, runId: string, call: number, type: 'ToolCallRequested' | 'ToolResultReceived'): ToolEvent {
  const envelope = {
    schemaVersion: 2 as const,
    tenantId: TENANT,
    conversationId,
    channel: 'web',
    runId,
    eventId: `00000000-0000-4000-8000-${(eventNumber++).toString(16).padStart(12, '0')}`.replace(
      /^0{8}/,
      Date.now().toString(16).slice(-8),
    ),
    occurredAt: new Date().toISOString(),
    roundIndex: Math.floor(call / 2),
    sequenceIndex: call % 2,
    toolCallId: `call_${call}`,
  };
  return type === 'ToolCallRequested'
    ? { ...envelope, type, toolName: 'lookup_order', arguments: { orderId: `A-${call}` } }
    : { ...envelope, type, result: { summary: RESULT_BODY }, isError: false };
}

/** Times of commit notices per conversation, as this process's own listener receives them. */
class CommitClock {
  private readonly waiting = new Map<string, (at: number) => void>();

  constructor(private readonly schema: string) {}

  notice(payload: string): void {
    const at = performance.now();
    const notice = JSON.parse(payload) as { schema: string; keys?: Array<[string, string]> };
    if (notice.schema !== this.schema) return;
    for (const [, conversationId] of notice.keys ?? []) {
      this.waiting.get(conversationId)?.(at);
      this.waiting.delete(conversationId);
    }
  }

  /** The next commit notice for the conversation (armed before the publish). */
  next(conversationId: string): Promise<number> {
    return new Promise((done) => this.waiting.set(conversationId, done));
  }
}

type WatchClient = grpc.Client & { WatchConversation: (request: unknown) => grpc.ClientReadableStream<ChangeMessage> };

/** One watcher: its snapshot size, and a promise per awaited (tool call, event type) resolved at arrival. */
class Watcher {
  snapshotInvocations = 0;
  private readonly arrivals = new Map<string, (at: number) => void>();
  private readonly call: grpc.ClientReadableStream<ChangeMessage>;
  readonly ready: Promise<void>;

  constructor(
    client: WatchClient,
    readonly conversationId: string,
  ) {
    this.call = client.WatchConversation({ tenant_id: TENANT, conversation_id: conversationId });
    this.ready = new Promise((done, fail) => {
      this.call.on('data', (message: ChangeMessage) => {
        const at = performance.now();
        if (message.snapshot) {
          this.snapshotInvocations += message.snapshot.invocations.length;
          if (message.snapshot.complete) done();
          return;
        }
        const changed = message.invocation_changed;
        if (!changed) return;
        const key = `${changed.invocation.invocation.tool_call_id}/${changed.event_type}`;
        this.arrivals.get(key)?.(at);
        this.arrivals.delete(key);
      });
      this.call.on('error', (error: grpc.ServiceError) => {
        if (error.code !== grpc.status.CANCELLED) fail(error);
      });
    });
  }

  arrival(toolCallId: string, eventType: string): Promise<number> {
    return new Promise((done) => this.arrivals.set(`${toolCallId}/${eventType}`, done));
  }

  close(): void {
    this.call.cancel();
  }
}

interface ScenarioResult {
  scenario: string;
  watchers: number;
  conversations: number;
  recordedInvocations: number;
  events: number;
  fromCommit: Figures;
  fromPublish: Figures;
  publishToCommit: Figures;
  serviceCpuMsPerEvent: number;
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      events: { type: 'string' },
      watchers: { type: 'string' },
      conversations: { type: 'string' },
      long: { type: 'string' },
      'long-events': { type: 'string' },
      keep: { type: 'boolean' },
    },
  });
  const shortEvents = intOption(values, 'events', 300);
  const manyWatchers = intOption(values, 'watchers', 20);
  const spreadOver = intOption(values, 'conversations', 10);
  const longInvocations = intOption(values, 'long', 2_000);
  const longEvents = intOption(values, 'long-events', 100);
  const keep = values.keep === true;

  const DATABASE_URL = await benchDatabaseUrl();
  const stamp = Date.now().toString(36);
  const schema = `bench_watch_${stamp}`;
  const topic = `toolhistory.bench-watch.${stamp}`;
  await runMigrations(DATABASE_URL, schema);
  const pool = createPool({ url: DATABASE_URL, schema, poolSize: 2, applicationName: 'toolhistory-bench' });
  const kafka = benchKafka(BROKERS);
  const admin = kafka.admin();
  await admin.connect();
  await createBenchTopics(admin, topic, 6);
  const producer: Producer = kafka.producer({ createPartitioner: Partitioners.DefaultPartitioner });
  await producer.connect();
  const port = await freePort();
  const service = spawn(process.execPath, [resolve(__dirname, '../apps/toolhistory/src/main.js')], {
    env: {
      ...benchServiceEnv({ brokers: BROKERS, stamp, topic, databaseUrl: DATABASE_URL, schema, roles: 'recorder,grpc', grpcPort: port }),
      MAX_SUBSCRIPTIONS_PER_TENANT: String(Math.max(100, manyWatchers * 2)),
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let output = '';
  service.stdout.on('data', (c) => (output = (output + c).slice(-20_000)));
  const clock = new CommitClock(schema);
  const listener = new PgClient({ connectionString: DATABASE_URL });
  const definition = protoLoader.loadSync(PROTO, { keepCase: true, longs: String, enums: String, defaults: true, oneofs: true });
  const loaded = grpc.loadPackageDefinition(definition) as unknown as {
    toolhistory: { v1: { ToolHistory: grpc.ServiceClientConstructor } };
  };
  const channels = Array.from(
    { length: 4 },
    () => new loaded.toolhistory.v1.ToolHistory(`127.0.0.1:${port}`, grpc.credentials.createInsecure()) as unknown as WatchClient,
  );
  const publish = (batch: readonly ToolEvent[]) =>
    producer.send({ topic, acks: -1, messages: batch.map((e) => ({ key: e.conversationId, value: JSON.stringify(e) })) });

  const results: ScenarioResult[] = [];
  try {
    for (let waited = 0; !output.includes('toolhistory started'); waited += 100) {
      if (waited > 60_000 || service.exitCode !== null || service.signalCode !== null) throw new Error(`service did not start:\n${output}`);
      await sleep(100);
    }
    await listener.connect();
    listener.on('notification', (n) => clock.notice(n.payload ?? '{}'));
    await listener.query(`LISTEN ${CONVERSATIONS_CHANGED_CHANNEL}`);

    /** Publishes `count` events over the conversations in turn, one at a time, timing each at every watcher of its conversation. */
    const runScenario = async (
      scenario: string,
      conversations: string[],
      watcherCount: number,
      firstCall: number,
      recordedInvocations: number,
      events: number,
    ): Promise<void> => {
      const watchers = Array.from(
        { length: watcherCount },
        (_, i) => new Watcher(channels[i % channels.length], conversations[i % conversations.length]),
      );
      await Promise.all(watchers.map((w) => w.ready));
      const fromCommit: number[] = [];
      const fromPublish: number[] = [];
      const publishToCommit: number[] = [];
      const cpuBefore = cpuSeconds(service.pid!);
      for (let i = 0; i < events; i += 1) {
        const conversationId = conversations[i % conversations.length];
        const step = Math.floor(i / conversations.length);
        const call = firstCall + Math.floor(step / 2);
        const type = step % 2 === 0 ? 'ToolCallRequested' : 'ToolResultReceived';
        const toolCallId = `call_${call}`;
        const mine = watchers.filter((w) => w.conversationId === conversationId);
        const arrivals = mine.map((w) => w.arrival(toolCallId, type));
        const committed = clock.next(conversationId);
        const published = performance.now();
        await publish([eventOf(conversationId, 'run-live', call, type)]);
        const commitAt = await committed;
        publishToCommit.push(commitAt - published);
        for (const at of await Promise.all(arrivals)) {
          fromCommit.push(at - commitAt);
          fromPublish.push(at - published);
        }
      }
      const serviceCpuMsPerEvent = round1(((cpuSeconds(service.pid!) - cpuBefore) * 1000) / events);
      for (const w of watchers) w.close();
      const result: ScenarioResult = {
        scenario,
        watchers: watcherCount,
        conversations: conversations.length,
        recordedInvocations,
        events,
        fromCommit: figuresOf(fromCommit),
        fromPublish: figuresOf(fromPublish),
        publishToCommit: figuresOf(publishToCommit),
        serviceCpuMsPerEvent,
      };
      results.push(result);
      console.log(`${scenario}: ${watcherCount} watcher(s) of ${conversations.length} conversation(s), ${events} events`);
      console.log(`  commit -> watcher:  ${show(result.fromCommit)}  (${fromCommit.length} arrivals)`);
      console.log(`  publish -> watcher: ${show(result.fromPublish)}`);
      console.log(`  publish -> commit:  ${show(result.publishToCommit)}; service CPU ${serviceCpuMsPerEvent} ms per event`);
    };

    const fresh = (name: string, n: number) => Array.from({ length: n }, (_, i) => `${name}-${stamp}-${i}`);
    await runScenario('one watcher', fresh('one', 1), 1, 0, 0, shortEvents);
    await runScenario('many watchers, one conversation', fresh('same', 1), manyWatchers, 0, 0, shortEvents);
    await runScenario('many watchers, spread', fresh('spread', spreadOver), manyWatchers, 0, 0, shortEvents);

    // A long conversation: --long invocations called and answered, recorded through Kafka first.
    const [long] = fresh('long', 1);
    console.log(`recording a conversation of ${longInvocations} invocations`);
    for (let call = 0; call < longInvocations; call += 250) {
      const batch: ToolEvent[] = [];
      for (let c = call; c < Math.min(longInvocations, call + 250); c += 1)
        batch.push(eventOf(long, 'run-earlier', c, 'ToolCallRequested'), eventOf(long, 'run-earlier', c, 'ToolResultReceived'));
      await publish(batch);
    }
    for (let waited = 0; ; waited += 200) {
      const { rows } = await pool.query<{ n: number }>(
        'SELECT event_count AS n FROM conversations WHERE tenant_id = $1 AND conversation_id = $2',
        [TENANT, long],
      );
      if ((rows[0]?.n ?? 0) >= longInvocations * 2) break;
      if (waited > 120_000) throw new Error(`the long conversation was not recorded (${rows[0]?.n ?? 0} events)`);
      await sleep(200);
    }
    await runScenario(`long conversation`, [long], 1, longInvocations, longInvocations, longEvents);
    await runScenario(
      `long conversation, many watchers`,
      [long],
      manyWatchers,
      longInvocations + longEvents,
      longInvocations + longEvents / 2,
      longEvents,
    );

    console.log('target: 100 ms from commit to watcher');
    console.log(JSON.stringify({ bench: 'watch', scenarios: results }));
  } finally {
    await listener.end().catch(() => undefined);
    for (const channel of channels) channel.close();
    await teardownBench({ children: [service], producer, admin, topic, pool, databaseUrl: DATABASE_URL, schema, keep });
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
