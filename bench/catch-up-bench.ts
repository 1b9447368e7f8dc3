/**
 * Catch-up ingest against the machine's floor, in one run: a fresh topic is
 * pre-loaded with the bench traffic, then recorded twice from its beginning,
 *
 * 1. by a bare exactly-once recorder (the floor): kafkajs eachBatch, each
 *    message parsed and inserted into one jsonb table keyed by event id, the
 *    partition's offset written in the same transaction; and
 * 2. by the service (recorder role), with a fresh consumer group and schema.
 *
 * Each rate is the events of the topic over the time from the group's join
 * to the last offset committed in PostgreSQL. The last line printed is one
 * JSON object with both rates and their ratio.
 *
 *   npm run bench:ingest -- --catch-up [--events 200000] [--keep]
 */
import { type Admin, type Kafka, Partitioners } from 'kafkajs';
import type { Pool } from 'pg';
import { createPool, dropSchema, runMigrations } from '../libs/persistence/src';
import { agentTraffic } from '../test/support/traffic';
import { createBenchTopics, sleep, spawnBenchRecorder, stopChild } from './bench-support';

const PARTITIONS = 6;
/** The service's default (RECORDER_PARTITIONS_CONCURRENCY): the floor gets the same. */
const CONCURRENT_PARTITIONS = 3;

export interface CatchUpSettings {
  kafka: Kafka;
  admin: Admin;
  brokers: string[];
  databaseUrl: string;
  events: number;
  keep: boolean;
  /** More settings for the service (encryption at rest on or off). */
  serviceEnv?: Record<string, string>;
}

export async function catchUpBench(settings: CatchUpSettings): Promise<void> {
  const stamp = Date.now().toString(36);
  const topic = `bench-catch-up-${stamp}`;
  await createBenchTopics(settings.admin, topic, PARTITIONS);
  const schemas: string[] = [];
  try {
    console.log(`pre-loading ${settings.events} events (1% duplicates) into ${topic}`);
    await preload(settings.kafka, topic, settings.events);

    const floorSchema = `bench_floor_${stamp}`;
    schemas.push(floorSchema);
    const floor = await bareRecorder(settings, topic, floorSchema);
    console.log(`floor (bare recorder): ${floor.eventsPerSecond} events/s (${floor.seconds.toFixed(1)} s)`);

    const serviceSchema = `bench_catch_up_${stamp}`;
    schemas.push(serviceSchema);
    const service = await serviceRecorder(settings, topic, serviceSchema);
    console.log(`service: ${service.eventsPerSecond} events/s (${service.seconds.toFixed(1)} s)`);

    const ratio = Math.round((service.eventsPerSecond / floor.eventsPerSecond) * 100) / 100;
    console.log(`service / floor: ${Math.round(ratio * 100)}% (target: 60% or more)`);
    console.log(
      JSON.stringify({
        mode: 'catch-up',
        events: settings.events,
        floorEventsPerSecond: floor.eventsPerSecond,
        serviceEventsPerSecond: service.eventsPerSecond,
        ratio,
      }),
    );
  } finally {
    if (!settings.keep) {
      await settings.admin.deleteTopics({ topics: [topic, `${topic}.dlq`] }).catch(() => undefined);
      for (const schema of schemas) await dropSchema(settings.databaseUrl, schema).catch(() => undefined);
    }
  }
}

async function preload(kafka: Kafka, topic: string, events: number): Promise<void> {
  const producer = kafka.producer({ createPartitioner: Partitioners.DefaultPartitioner, allowAutoTopicCreation: false });
  await producer.connect();
  try {
    const traffic = agentTraffic(events, { seed: 1, duplicateRate: 0.01, conversations: 5_000 });
    let batch: { key: string; value: string }[] = [];
    const inFlight: Promise<unknown>[] = [];
    for (const event of traffic) {
      batch.push({ key: event.conversationId, value: JSON.stringify(event) });
      if (batch.length < 1_000) continue;
      inFlight.push(producer.send({ topic, acks: -1, messages: batch }));
      batch = [];
      if (inFlight.length >= 4) await inFlight.shift();
    }
    if (batch.length > 0) inFlight.push(producer.send({ topic, acks: -1, messages: batch }));
    await Promise.all(inFlight);
  } finally {
    await producer.disconnect();
  }
}

async function committedTotal(pool: Pool, table: string): Promise<number> {
  const { rows } = await pool.query<{ n: string | null }>(`SELECT sum(next_offset) AS n FROM ${table} WHERE next_offset > 0`);
  return Number(rows[0].n ?? 0);
}

/** The floor: what recording exactly once costs with nothing else done. */
async function bareRecorder(
  settings: CatchUpSettings,
  topic: string,
  schema: string,
): Promise<{ eventsPerSecond: number; seconds: number }> {
  const pool = createPool({ url: settings.databaseUrl, schema, poolSize: CONCURRENT_PARTITIONS, applicationName: 'toolhistory-floor' });
  await pool.query(`CREATE SCHEMA IF NOT EXISTS "${schema}"`);
  await pool.query(`CREATE TABLE floor_events (event_id uuid PRIMARY KEY, payload jsonb NOT NULL)`);
  await pool.query(`CREATE TABLE floor_offsets (partition int PRIMARY KEY, next_offset bigint NOT NULL)`);
  const consumer = settings.kafka.consumer({ groupId: `bench-floor-${schema}`, maxBytesPerPartition: 2 * 1024 * 1024 });
  let joinedAt = 0;
  consumer.on(consumer.events.GROUP_JOIN, () => (joinedAt ||= Date.now()));
  try {
    await consumer.connect();
    await consumer.subscribe({ topic, fromBeginning: true });
    await consumer.run({
      partitionsConsumedConcurrently: CONCURRENT_PARTITIONS,
      eachBatch: async ({ batch }) => {
        const events = batch.messages.map((m) => JSON.parse(m.value!.toString('utf8')) as { eventId: string });
        const nextOffset = BigInt(batch.messages[batch.messages.length - 1].offset) + 1n;
        const client = await pool.connect();
        try {
          await client.query('BEGIN');
          await client.query(
            `INSERT INTO floor_events (event_id, payload)
             SELECT (e ->> 'eventId')::uuid, e FROM jsonb_array_elements($1::jsonb) AS e ON CONFLICT DO NOTHING`,
            [JSON.stringify(events)],
          );
          await client.query(
            `INSERT INTO floor_offsets (partition, next_offset) VALUES ($1, $2)
             ON CONFLICT (partition) DO UPDATE SET next_offset = EXCLUDED.next_offset`,
            [batch.partition, nextOffset.toString()],
          );
          await client.query('COMMIT');
        } catch (error) {
          await client.query('ROLLBACK');
          throw error;
        } finally {
          client.release();
        }
      },
    });
    while ((await committedTotal(pool, 'floor_offsets')) < settings.events) await sleep(20);
    const seconds = (Date.now() - joinedAt) / 1000;
    return { eventsPerSecond: Math.round(settings.events / seconds), seconds };
  } finally {
    await consumer.disconnect();
    await pool.end();
  }
}

async function serviceRecorder(
  settings: CatchUpSettings,
  topic: string,
  schema: string,
): Promise<{ eventsPerSecond: number; seconds: number }> {
  await runMigrations(settings.databaseUrl, schema);
  const pool = createPool({ url: settings.databaseUrl, schema, poolSize: 1, applicationName: 'toolhistory-bench' });
  const service = spawnBenchRecorder({
    brokers: settings.brokers,
    topic,
    groupId: `bench-service-${schema}`,
    databaseUrl: settings.databaseUrl,
    schema,
    env: settings.serviceEnv,
  });
  try {
    const joinedAt = await service.seen('partitions assigned');
    while ((await committedTotal(pool, 'consumer_offsets')) < settings.events) await sleep(20);
    const seconds = (Date.now() - joinedAt) / 1000;
    return { eventsPerSecond: Math.round(settings.events / seconds), seconds };
  } finally {
    await stopChild(service.child);
    await pool.end();
  }
}
