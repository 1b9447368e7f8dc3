import { RunCompleted, RunCompletedV1, StoredToolEvent, validateToolEvent } from '../../contract/src';
import { parsePolicyDocument, RecordedToolEvent } from '../../domain/src';
import { freshSchema, FreshSchema } from '../../../test/support/fresh-schema';
import { runsOf } from '../../../test/support/read-model-queries';
import { RunScope, runCompleted, runCompletedV1, toolCall, toolResult } from '../../../test/support/tool-event-factory';
import { PostgresEventStore } from './postgres-event-store';
import { PostgresRecordingStore } from './postgres-recording-store';

const parsed = parsePolicyDocument({ tools: { lookup_patient: { maskResult: ['$.diagnosis'] } } });
if (!parsed.ok) throw new Error(parsed.problems.join('\n'));
const policy = parsed.policy.redaction;

const TENANT = 'acme';
/** 1530 input and 212 output tokens: one v1 total, or the sum of two v2 service calls. */
const V1_USAGE = { inputTokens: 1530, outputTokens: 212 };
const V2_USAGE = [
  { inputTokens: 1100, outputTokens: 64, model: 'model-large' },
  { inputTokens: 430, outputTokens: 148, model: 'model-small' },
];

function runOf(scope: RunScope, version: 1 | 2, usage: 'reported' | 'absent' = 'reported'): StoredToolEvent[] {
  const calls = [
    toolCall(scope, { schemaVersion: version, roundIndex: 0, sequenceIndex: 0, toolName: 'lookup_order', arguments: { orderId: 'A-1' } }),
    toolResult(scope, { schemaVersion: version, roundIndex: 0, sequenceIndex: 0, result: { status: 'shipped' } }),
  ];
  const completion =
    version === 1
      ? runCompletedV1(scope, { usage: usage === 'reported' ? V1_USAGE : undefined })
      : runCompleted(scope, { usage: usage === 'reported' ? V2_USAGE : undefined });
  return [...calls, completion];
}

describe('events recorded as schemaVersion 1 and read as schemaVersion 2 (real PostgreSQL)', () => {
  let db: FreshSchema;
  let recorder: PostgresRecordingStore;
  let eventStore: PostgresEventStore;
  let offset = 0;

  const record = (events: StoredToolEvent[]) => {
    const batch = events.map((event) => ({ offset: String(offset++), event }));
    return recorder.recordBatch({ consumerGroup: 'g', topic: 'events', partition: 0, events: batch, nextOffset: String(offset) });
  };
  const storedRows = async (conversationId: string) => {
    const { rows } = await db.pool.query<{ type: string; schema_version: number; payload: Record<string, unknown> }>(
      'SELECT type, schema_version, payload FROM events WHERE tenant_id = $1 AND conversation_id = $2 ORDER BY stream_position',
      [TENANT, conversationId],
    );
    return rows;
  };
  const tokensOf = async (conversationId: string) =>
    (await runsOf(db.pool, TENANT, conversationId)).map((r: { input_tokens: number | null; output_tokens: number | null }) => [
      r.input_tokens,
      r.output_tokens,
    ]);

  const v1Run = runOf({ tenantId: TENANT, conversationId: 'as-v1', runId: 'r1' }, 1);
  const v2Run = runOf({ tenantId: TENANT, conversationId: 'as-v2', runId: 'r1' }, 2);
  const v1RunWithoutUsage = runOf({ tenantId: TENANT, conversationId: 'as-v1-no-usage', runId: 'r1' }, 1, 'absent');

  beforeAll(async () => {
    db = await freshSchema('upcast');
    recorder = new PostgresRecordingStore(db.pool, policy);
    eventStore = new PostgresEventStore(db.pool);
    // Both versions in one batch, as a topic carries them while producers upgrade.
    expect(await record([...v1Run, ...v2Run, ...v1RunWithoutUsage])).toMatchObject({ appended: 9 });
  });
  afterAll(() => db.drop());

  it('stores a version 1 event as version 1: its schema_version column and its payload', async () => {
    const rows = await storedRows('as-v1');
    expect(rows.map((r) => [r.type, r.schema_version, r.payload.schemaVersion])).toEqual([
      ['ToolCallRequested', 1, 1],
      ['ToolResultReceived', 1, 1],
      ['RunCompleted', 1, 1],
    ]);
    expect(rows[2].payload).toEqual(JSON.parse(JSON.stringify(v1Run[2])));
    expect(rows[2].payload.usage).toEqual(V1_USAGE);
    expect((await storedRows('as-v1-no-usage'))[2].payload).not.toHaveProperty('usage');
    expect((await storedRows('as-v2')).map((r) => r.schema_version)).toEqual([2, 2, 2]);
  });

  it('reads version 1 events back through the event store as valid version 2 events', async () => {
    const assertCurrent = (recorded: RecordedToolEvent) => {
      expect(recorded.event.schemaVersion).toBe(2);
      const revalidated = validateToolEvent(recorded.event);
      if (!revalidated.ok) throw revalidated.error;
    };
    const stream = await eventStore.readStream({ tenantId: TENANT, conversationId: 'as-v1' });
    expect(stream.map((r) => r.event.type)).toEqual(['ToolCallRequested', 'ToolResultReceived', 'RunCompleted']);
    stream.forEach(assertCurrent);
    const completed = stream[2].event as RunCompleted;
    expect(completed.usage).toEqual([V1_USAGE]);
    const { usage: _v1Usage, schemaVersion: _v1, ...unchanged } = v1Run[2] as RunCompletedV1;
    expect(completed).toMatchObject(unchanged);
    // The call keeps what the recorder added (its redaction note).
    expect(stream[0].event.redaction).toMatchObject({ persist: 'full' });

    const withoutUsage = await eventStore.readStream({ tenantId: TENANT, conversationId: 'as-v1-no-usage' });
    expect(withoutUsage[2].event).not.toHaveProperty('usage');

    const all = await eventStore.readAll('0', { tenantId: TENANT, types: ['RunCompleted'], limit: 100 });
    all.forEach(assertCurrent);
    expect(all.map((r) => (r.event as RunCompleted).usage)).toEqual([[V1_USAGE], V2_USAGE, undefined]);
  });

  it('gives a run the same tokens whichever version it was recorded in, and none when it reported none', async () => {
    expect(await tokensOf('as-v1')).toEqual([[1530, 212]]);
    expect(await tokensOf('as-v2')).toEqual(await tokensOf('as-v1'));
    expect(await tokensOf('as-v1-no-usage')).toEqual([[null, null]]);
  });

  it('re-redacts a version 1 result recorded before its call in its own version', async () => {
    const scope = { tenantId: TENANT, conversationId: 'early-v1', runId: 'r1' };
    await record([toolResult(scope, { schemaVersion: 1, roundIndex: 0, sequenceIndex: 0, result: { diagnosis: 'flu' } })]);
    await record([
      toolCall(scope, { schemaVersion: 1, roundIndex: 0, sequenceIndex: 0, toolName: 'lookup_patient', arguments: { id: 'p-1' } }),
    ]);
    const [result] = await storedRows('early-v1');
    expect(result).toMatchObject({
      type: 'ToolResultReceived',
      schema_version: 1,
      payload: { schemaVersion: 1, result: { diagnosis: '[REDACTED:$.diagnosis]' } },
    });
    const [read] = await eventStore.readStream(scope);
    expect(read.event).toMatchObject({ schemaVersion: 2, result: { diagnosis: '[REDACTED:$.diagnosis]' } });
  });
});
