import fc from 'fast-check';
import type { JsonObject, JsonValue } from '../../contract/src';
import { parsePolicyDocument } from '../../domain/src';
import { freshSchema, FreshSchema } from '../../../test/support/fresh-schema';
import { toolCall, toolResult } from '../../../test/support/tool-event-factory';
import { PostgresEventStore } from './postgres-event-store';
import { PostgresRecordingStore } from './postgres-recording-store';
import { PostgresReplayReader } from './postgres-replay-reader';

// No detector runs, so what is read back can only differ from what was sent by how it was stored.
const parsed = parsePolicyDocument({ defaults: { detectors: [] } });
if (!parsed.ok) throw new Error(parsed.problems.join('\n'));

describe('payload text as received (real PostgreSQL)', () => {
  let db: FreshSchema;
  let store: PostgresRecordingStore;
  let offset = 0;
  let conversation = 0;

  beforeAll(async () => {
    db = await freshSchema('payload_text');
    store = new PostgresRecordingStore(db.pool, parsed.policy.redaction);
  });
  afterAll(() => db.drop());

  /** Records a call and its result, then reads them back from the read model and from the event store. */
  async function roundTrip(args: JsonObject, result: JsonValue) {
    const scope = { tenantId: 'acme', conversationId: `c-${conversation++}`, runId: 'r1' };
    const events = [
      toolCall(scope, { roundIndex: 0, sequenceIndex: 0, arguments: args }),
      toolResult(scope, { roundIndex: 0, sequenceIndex: 0, result }),
    ];
    const first = offset;
    offset += events.length;
    await store.recordBatch({
      consumerGroup: 'g',
      topic: 'events',
      partition: 0,
      events: events.map((event, i) => ({ offset: String(first + i), event })),
      nextOffset: String(offset),
    });
    const rows = await new PostgresReplayReader(db.pool).readConversation(scope.tenantId, scope.conversationId);
    const stream = await new PostgresEventStore(db.pool).readStream(scope);
    return { row: rows!.invocations[0], stream };
  }

  it('replays the key order the producer wrote, not one of its own', async () => {
    const { row, stream } = await roundTrip(
      { orderId: 'A-1', zone: 'eu', amount: 3 },
      { status: 'shipped', carrier: 'DHL', eta: '2026-11-24' },
    );
    expect(JSON.stringify(row.result)).toBe('{"status":"shipped","carrier":"DHL","eta":"2026-11-24"}');
    expect(JSON.stringify(row.arguments)).toBe('{"orderId":"A-1","zone":"eu","amount":3}');
    expect(JSON.stringify(stream.map((r) => r.event.type === 'ToolResultReceived' && r.event.result)[1])).toBe(
      '{"status":"shipped","carrier":"DHL","eta":"2026-11-24"}',
    );
  });

  it('gives back the same text for any JSON value, from the read model and from the event store', async () => {
    const value = fc.jsonValue({ maxDepth: 4, stringUnit: 'grapheme' }) as fc.Arbitrary<JsonValue>;
    const object = fc.dictionary(fc.string({ unit: 'grapheme' }), value, { maxKeys: 8 }) as fc.Arbitrary<JsonObject>;
    await fc.assert(
      fc.asyncProperty(object, value, async (args, result) => {
        const { row, stream } = await roundTrip(args, result);
        expect(JSON.stringify(row.arguments)).toBe(JSON.stringify(args));
        expect(JSON.stringify(row.result ?? null)).toBe(JSON.stringify(result));
        const [call, answer] = stream.map((r) => r.event);
        expect(call.type === 'ToolCallRequested' && JSON.stringify(call.arguments)).toBe(JSON.stringify(args));
        expect(answer.type === 'ToolResultReceived' && JSON.stringify(answer.result)).toBe(JSON.stringify(result));
      }),
      { numRuns: 60 },
    );
  });

  it('keeps one copy of each payload: the read model reads it from the events', async () => {
    const { row } = await roundTrip({ sku: 'B-7' }, { inStock: 4 });
    expect([row.arguments, row.result]).toEqual([{ sku: 'B-7' }, { inStock: 4 }]);
    const { rows } = await db.pool.query<{ copies: number; rows: number }>(
      'SELECT count(*) FILTER (WHERE arguments IS NOT NULL OR result IS NOT NULL)::int AS copies, count(*)::int AS rows FROM invocations',
    );
    expect(rows[0].rows).toBeGreaterThan(0);
    expect(rows[0].copies).toBe(0);
  });
});
