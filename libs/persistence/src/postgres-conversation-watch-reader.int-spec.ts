import type { ToolEvent } from '../../contract/src';
import { freshSchema, FreshSchema } from '../../../test/support/fresh-schema';
import { runCompleted, toolCall, toolResult } from '../../../test/support/tool-event-factory';
import { PostgresAuditReader } from './postgres-audit-reader';
import { PostgresConversationEraser } from './postgres-conversation-eraser';
import { PostgresConversationWatchReader } from './postgres-conversation-watch-reader';
import { PostgresEventStore } from './postgres-event-store';
import { PostgresRecordingStore } from './postgres-recording-store';

describe('the rows a watch reads (real PostgreSQL)', () => {
  let db: FreshSchema;
  let offset = 0;
  const conversation = { tenantId: 't', conversationId: 'conv' };
  const scope = { ...conversation, runId: 'r1' };

  const record = (events: ToolEvent[]) => {
    const batch = events.map((event) => ({ offset: String(offset++), event }));
    return new PostgresRecordingStore(db.pool).recordBatch({
      consumerGroup: 'g',
      topic: 'events',
      partition: 0,
      events: batch,
      nextOffset: String(offset),
    });
  };

  beforeAll(async () => {
    db = await freshSchema('watch_reader');
  });
  afterAll(() => db.drop());

  it('answers an unknown conversation with nothing, then the rows, their event count and the run statuses, then what followed a position; erased once erased', async () => {
    const reader = new PostgresConversationWatchReader(db.pool);
    expect(await reader.read(conversation)).toEqual({ eventCount: 0, erased: false, invocations: [], runs: [] });

    await record([
      toolCall(scope, { roundIndex: 0, sequenceIndex: 0, toolCallId: 'c1' }),
      toolResult(scope, { roundIndex: 0, sequenceIndex: 0, toolCallId: 'c1' }),
      toolCall(scope, { roundIndex: 1, sequenceIndex: 0, toolCallId: 'c2' }),
    ]);
    const state = await reader.read(conversation);
    const listed = await new PostgresAuditReader(db.pool).listInvocations({ tenantId: 't', conversationId: 'conv' }, null, 100);
    expect(state).toMatchObject({ eventCount: 3, erased: false, runs: [{ runId: 'r1', status: 'running' }] });
    // Exactly what ListToolInvocations lists, in its order.
    expect(state.invocations).toEqual(listed);
    const streamed = await new PostgresEventStore(db.pool).readStream(conversation);
    expect(streamed.map((e) => e.streamPosition)).toEqual([1, 2, 3]);

    // After the snapshot: only the events after a position, and the rows and runs they touch, as the snapshot shows them.
    const since = await reader.readSince(conversation, 1);
    expect(since.eventCount).toBe(3);
    expect(since.events.map((e) => [e.streamPosition, e.event.type])).toEqual([
      [2, 'ToolResultReceived'],
      [3, 'ToolCallRequested'],
    ]);
    expect(since.events).toEqual(streamed.slice(1));
    expect([...since.invocations].sort((a, b) => a.pairKey.localeCompare(b.pairKey))).toEqual(listed);
    expect(since.runs).toEqual(state.runs);
    expect((await reader.readSince(conversation, 2)).invocations.map((i) => i.pairKey)).toEqual(['id:c2']);
    expect(await reader.readSince(conversation, 3)).toEqual({ eventCount: 3, erased: false, events: [], invocations: [], runs: [] });

    await record([runCompleted(scope)]);
    expect(await reader.read(conversation)).toMatchObject({ eventCount: 4, runs: [{ status: 'completed' }] });
    expect(await reader.readSince(conversation, 3)).toMatchObject({
      eventCount: 4,
      events: [{ streamPosition: 4, event: { type: 'RunCompleted' } }],
      invocations: [],
      runs: [],
    });

    await new PostgresConversationEraser(db.pool).erase('t', 'conv');
    expect(await reader.read(conversation)).toMatchObject({ erased: true, invocations: [] });
    expect(await reader.readSince(conversation, 4)).toMatchObject({ erased: true, events: [] });
  });
});
