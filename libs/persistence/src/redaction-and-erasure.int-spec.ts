import type { ToolEvent } from '../../contract/src';
import { parsePolicyDocument } from '../../domain/src';
import { freshSchema, FreshSchema } from '../../../test/support/fresh-schema';
import {
  catchUpSearch,
  countRows,
  INVOCATION_ARGUMENTS,
  INVOCATION_RESULT,
  invocationsOf,
  streamOf,
} from '../../../test/support/read-model-queries';
import { runCompleted, toolCall, toolResult } from '../../../test/support/tool-event-factory';
import { PostgresConversationEraser } from './postgres-conversation-eraser';
import { PostgresRecordingStore } from './postgres-recording-store';
import { PostgresReplayReader } from './postgres-replay-reader';

const parsed = parsePolicyDocument({ tools: { lookup_patient: { maskResult: ['$.diagnosis'] }, billing_probe: { persist: 'metadata' } } });
if (!parsed.ok) throw new Error(parsed.problems.join('\n'));
const policy = parsed.policy.redaction;

describe('redaction and erasure in the PostgreSQL store (real PostgreSQL)', () => {
  let db: FreshSchema;
  let store: PostgresRecordingStore;
  let offset = 0;

  const record = (events: ToolEvent[]) => {
    const batch = events.map((event) => ({ offset: String(offset++), event }));
    return store.recordBatch({ consumerGroup: 'g', topic: 'events', partition: 0, events: batch, nextOffset: String(offset) });
  };

  beforeAll(async () => {
    db = await freshSchema('redact');
    store = new PostgresRecordingStore(db.pool, policy);
  });
  afterAll(() => db.drop());

  it('applies the tool rule to a result recorded in an earlier batch than its call', async () => {
    const scope = { tenantId: 't1', conversationId: 'early', runId: 'r1' };
    const result = toolResult(scope, {
      roundIndex: 0,
      sequenceIndex: 0,
      result: { diagnosis: 'type 2 diabetes', contact: 'pat@example.org' },
    });
    await record([result]);
    let stored = await streamOf(db.pool, 't1', 'early');
    // The tool is not known yet: the default detectors applied, the tool's mask could not.
    expect(stored[0].payload.result).toEqual({ diagnosis: 'type 2 diabetes', contact: '[REDACTED:email]' });

    await record([toolCall(scope, { roundIndex: 0, sequenceIndex: 0, toolName: 'lookup_patient', arguments: { id: 'p-7' } })]);
    stored = await streamOf(db.pool, 't1', 'early');
    expect(stored[0].payload.result).toEqual({ diagnosis: '[REDACTED:$.diagnosis]', contact: '[REDACTED:email]' });
    expect(stored[0].payload.redaction).toMatchObject({ persist: 'full', counts: { email: 1, '$.diagnosis': 1 } });
    const [row] = await invocationsOf(db.pool, 't1', 'early');
    expect(row.result).toEqual({ diagnosis: '[REDACTED:$.diagnosis]', contact: '[REDACTED:email]' });
    const { rows } = await db.pool.query(
      'SELECT persist, argument_redactions, result_redactions, arguments_bytes, result_bytes FROM invocations WHERE conversation_id = $1',
      ['early'],
    );
    expect(rows[0]).toEqual({
      persist: 'full',
      argument_redactions: {},
      result_redactions: { email: 1, '$.diagnosis': 1 },
      arguments_bytes: 12,
      result_bytes: 59,
    });
  });

  it('keeps sizes and no payload for a metadata-only tool, whichever event comes first', async () => {
    const scope = { tenantId: 't1', conversationId: 'meta', runId: 'r1' };
    await record([toolResult(scope, { roundIndex: 0, sequenceIndex: 0, result: { invoice: 'INV-1', total: 12.5 } })]);
    await record([toolCall(scope, { roundIndex: 0, sequenceIndex: 0, toolName: 'billing_probe', arguments: { account: 'acct-9' } })]);
    const stream = await streamOf(db.pool, 't1', 'meta');
    expect(stream.map((e) => [e.type, e.payload.arguments ?? e.payload.result])).toEqual([
      ['ToolResultReceived', null],
      ['ToolCallRequested', {}],
    ]);
    const { rows } = await db.pool.query(
      `SELECT persist, ${INVOCATION_ARGUMENTS} AS arguments, ${INVOCATION_RESULT} AS result, arguments_bytes, result_bytes
       FROM invocations WHERE conversation_id = $1`,
      ['meta'],
    );
    expect(rows[0]).toEqual({ persist: 'metadata', arguments: {}, result: null, arguments_bytes: 20, result_bytes: 32 });
  });

  it('erases a conversation everywhere and keeps it erased when its events are delivered again', async () => {
    const scope = { tenantId: 't2', conversationId: 'gone', runId: 'r1' };
    const events = [
      toolCall(scope, { roundIndex: 0, sequenceIndex: 0 }),
      toolResult(scope, { roundIndex: 0, sequenceIndex: 0 }),
      toolCall(scope, { roundIndex: 0, sequenceIndex: 1 }),
      toolResult(scope, { roundIndex: 0, sequenceIndex: 1 }),
      runCompleted(scope),
    ];
    const neighbour = toolCall({ ...scope, conversationId: 'stays' }, { roundIndex: 0, sequenceIndex: 0 });
    await record([...events, neighbour]);
    await catchUpSearch(db.pool);
    const documents = () =>
      db.pool
        .query(
          `SELECT 'words' AS search, conversation_id FROM invocation_search WHERE tenant_id = 't2'
           UNION ALL SELECT 'substring', conversation_id FROM invocation_substring WHERE tenant_id = 't2' ORDER BY 1, 2`,
        )
        .then((r) => r.rows.map((x) => `${x.search}:${x.conversation_id}`));
    expect(await documents()).toEqual(['substring:gone', 'substring:gone', 'substring:stays', 'words:gone', 'words:gone', 'words:stays']);
    const before = { events: await countRows(db.pool, 'events'), invocations: await countRows(db.pool, 'invocations') };

    const eraser = new PostgresConversationEraser(db.pool);
    expect(await eraser.erase('t2', 'gone')).toEqual({ erasedEvents: 5, erasedInvocations: 2 });
    expect(await streamOf(db.pool, 't2', 'gone')).toEqual([]);
    expect(await invocationsOf(db.pool, 't2', 'gone')).toEqual([]);
    expect(await new PostgresReplayReader(db.pool).readConversation('t2', 'gone')).toBeNull();
    expect(await countRows(db.pool, 'events')).toBe(before.events - 5);
    expect(await countRows(db.pool, 'invocations')).toBe(before.invocations - 2);
    expect(await documents()).toEqual(['substring:stays', 'words:stays']);

    // Kafka redelivers the old events (a reset offset, a replayed topic): nothing comes back.
    expect(await record(events)).toMatchObject({ appended: 0, erased: 5 });
    expect(await streamOf(db.pool, 't2', 'gone')).toEqual([]);
    expect(await new PostgresReplayReader(db.pool).readConversation('t2', 'gone')).toBeNull();
    expect(await streamOf(db.pool, 't2', 'stays')).toHaveLength(1);
    expect(await eraser.erase('t2', 'gone')).toEqual({ erasedEvents: 0, erasedInvocations: 0 });
  });

  it('tombstones a conversation erased before any of its events arrived', async () => {
    await new PostgresConversationEraser(db.pool).erase('t3', 'not-yet');
    const outcome = await record([
      toolCall({ tenantId: 't3', conversationId: 'not-yet', runId: 'r' }, { roundIndex: 0, sequenceIndex: 0 }),
    ]);
    expect(outcome).toMatchObject({ appended: 0, erased: 1 });
    expect(await streamOf(db.pool, 't3', 'not-yet')).toEqual([]);
  });
});
