/**
 * The floor of catch-up-bench.ts, in a process of its own so that its CPU
 * is its own: a bare exactly-once recorder (kafkajs eachBatch with
 * `FLOOR_CONCURRENCY` partitions at a time, each message parsed and inserted
 * into one jsonb table keyed by event id, the partition's offset written in
 * the same transaction). Settings from the environment: FLOOR_BROKERS,
 * FLOOR_TOPIC, FLOOR_GROUP, FLOOR_DATABASE_URL, FLOOR_SCHEMA (tables made
 * there), FLOOR_CONCURRENCY. Prints "partitions assigned" once its group is
 * joined, and records until it is stopped.
 */
import { Kafka, logLevel } from 'kafkajs';
import { createPool } from '../libs/persistence/src';

async function main(): Promise<void> {
  const env = (name: string): string => {
    const value = process.env[name];
    if (!value) throw new Error(`${name} is not set`);
    return value;
  };
  const schema = env('FLOOR_SCHEMA');
  const concurrency = Number(env('FLOOR_CONCURRENCY'));
  const pool = createPool({ url: env('FLOOR_DATABASE_URL'), schema, poolSize: concurrency, applicationName: 'toolhistory-floor' });
  await pool.query(`CREATE SCHEMA IF NOT EXISTS "${schema}"`);
  await pool.query(`CREATE TABLE floor_events (event_id uuid PRIMARY KEY, payload jsonb NOT NULL)`);
  await pool.query(`CREATE TABLE floor_offsets (partition int PRIMARY KEY, next_offset bigint NOT NULL)`);
  const kafka = new Kafka({ clientId: 'toolhistory-floor', brokers: env('FLOOR_BROKERS').split(','), logLevel: logLevel.NOTHING });
  const consumer = kafka.consumer({ groupId: env('FLOOR_GROUP'), maxBytesPerPartition: 2 * 1024 * 1024 });
  consumer.on(consumer.events.GROUP_JOIN, () => console.log('partitions assigned'));
  const stop = async () => {
    await consumer.disconnect();
    await pool.end();
    process.exit(0);
  };
  process.once('SIGTERM', () => void stop());
  await consumer.connect();
  await consumer.subscribe({ topic: env('FLOOR_TOPIC'), fromBeginning: true });
  await consumer.run({
    partitionsConsumedConcurrently: concurrency,
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
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
