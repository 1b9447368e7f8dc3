/**
 * Where the tests find their services. The defaults match a local broker
 * started by `npm run kafka:start` and the local PostgreSQL.
 */
export const TEST_KAFKA_BROKERS = (process.env.TEST_KAFKA_BROKERS ?? '127.0.0.1:9092').split(',');
export const TEST_DATABASE_URL = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/toolhistory_test';

/** A name no other test file or run uses: fresh topics, schemas and groups per file. */
export function uniqueName(prefix: string): string {
  return `${prefix}_${Date.now().toString(36)}_${Math.random().toString(36).slice(2, 8)}`;
}
