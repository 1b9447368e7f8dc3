import fc from 'fast-check';
import { randomUUID } from 'node:crypto';
import type { ToolEvent } from '../../contract/src';
import { parsePolicyDocument, type ReasoningStep, reasoningRulesOf } from '../../domain/src';
import { InMemoryReasoning } from '../../domain/src/reasoning/in-memory-reasoning.fixture';
import { freshSchema, FreshSchema } from '../../../test/support/fresh-schema';
import { modelResponse, runCompleted, toolCall, toolResult } from '../../../test/support/tool-event-factory';
import { o200kTokens } from '../../tokenizer/src';
import { inTransaction } from './in-transaction';
import { PostgresConversationEraser } from './postgres-conversation-eraser';
import { applyReasoningSteps } from './postgres-reasoning-state';
import { PostgresRecordingStore } from './postgres-recording-store';
import { PostgresReplayReader } from './postgres-replay-reader';

const SECRET_THOUGHT = 'the customer paid with card 4111 1111 1111 1111';

describe('reasoning state apart from its event (real PostgreSQL)', () => {
  let db: FreshSchema;
  let store: PostgresRecordingStore;
  let offset = 0;
  const record = (events: ToolEvent[]) => {
    const batch = events.map((event) => ({ offset: String(offset++), event }));
    return store.recordBatch({ consumerGroup: 'g', topic: 'events', partition: 0, events: batch, nextOffset: String(offset) });
  };
  /** Every text of the schema that could hold the state: events, the read model, the state's own table. */
  const placesHolding = async (text: string) => {
    const { rows } = await db.pool.query<{ place: string }>(
      `SELECT 'events' AS place FROM events WHERE payload::text LIKE $1
       UNION ALL SELECT 'model_responses' FROM model_responses r WHERE r::text LIKE $1
       UNION ALL SELECT 'model_reasoning' FROM model_reasoning WHERE state::text LIKE $1`,
      [`%${text}%`],
    );
    return rows.map((r) => r.place);
  };

  beforeAll(async () => {
    db = await freshSchema('reasoning');
    const policy = parsePolicyDocument({ tools: { read_vault: { reasoning: { keep: 'never' } } } });
    if (!policy.ok) throw new Error(policy.problems.join());
    store = new PostgresRecordingStore(db.pool, policy.policy.redaction, undefined, reasoningRulesOf(policy.policy.replay));
  });
  afterAll(async () => db?.drop());

  it('stores the event without its state, keeps the state apart until the turn ends, and then nowhere', async () => {
    const run = { tenantId: 't', conversationId: 'turns', runId: 'r1', userMessageId: 'u1' };
    const thinking = [{ type: 'thinking', thinking: SECRET_THOUGHT, signature: 'sig-1' }];
    await record([
      modelResponse(run, { roundIndex: 0, reasoning: thinking, callSignatures: { call_a: 'sig-call' } }),
      toolCall(run, { roundIndex: 0, sequenceIndex: 0, toolCallId: 'call_a', toolName: 'get_order' }),
      toolResult(run, { roundIndex: 0, sequenceIndex: 0, toolCallId: 'call_a' }),
    ]);
    // Redaction never touches reasoning: the card number is in the state as the model produced it, and only there.
    expect(await placesHolding(SECRET_THOUGHT)).toEqual(['model_reasoning']);
    const rows = await new PostgresReplayReader(db.pool).readConversation('t', 'turns');
    expect(rows?.responses).toEqual([
      expect.objectContaining({
        runId: 'r1',
        roundIndex: 0,
        provider: 'anthropic',
        reasoningBytes: expect.any(Number),
        state: { reasoning: thinking, callSignatures: { call_a: 'sig-call' } },
        // Counted once when recorded, with the recorder's counter: the text and the thinking block as its JSON text.
        textTokens: o200kTokens('Let me look that up.'),
        reasoningTokens: o200kTokens(JSON.stringify(thinking[0])),
      }),
    ]);

    await record([runCompleted(run, { finishReason: 'stop' })]);
    expect(await placesHolding(SECRET_THOUGHT)).toEqual([]);
    expect((await new PostgresReplayReader(db.pool).readConversation('t', 'turns'))?.responses).toEqual([
      expect.objectContaining({ runId: 'r1', state: null, reasoningBytes: expect.any(Number), reasoningTokens: 0 }),
    ]);
  });

  it("lets a turn's state go when the conversation moves on to another message, keeps none for a tool whose rule says never", async () => {
    const first = { tenantId: 't', conversationId: 'moves-on', runId: 'r1', userMessageId: 'u1' };
    const next = { tenantId: 't', conversationId: 'moves-on', runId: 'r2', userMessageId: 'u2' };
    await record([modelResponse(first, { roundIndex: 0 }), runCompleted(first, { finishReason: 'tool_limit' })]);
    expect(await db.pool.query('SELECT run_id FROM model_reasoning WHERE conversation_id = $1', ['moves-on']).then((r) => r.rows)).toEqual([
      { run_id: 'r1' },
    ]);
    await record([modelResponse(next, { roundIndex: 0 })]);
    expect(await db.pool.query('SELECT run_id FROM model_reasoning WHERE conversation_id = $1', ['moves-on']).then((r) => r.rows)).toEqual([
      { run_id: 'r2' },
    ]);
    await record([toolCall(next, { roundIndex: 0, sequenceIndex: 0, toolName: 'read_vault' })]);
    expect(await db.pool.query('SELECT run_id FROM model_reasoning WHERE conversation_id = $1', ['moves-on']).then((r) => r.rowCount)).toBe(
      0,
    );
  });

  it('erases the state with its conversation', async () => {
    const run = { tenantId: 't', conversationId: 'erased', runId: 'r1', userMessageId: 'u1' };
    await record([modelResponse(run, { roundIndex: 0, reasoning: [{ type: 'thinking', thinking: 'erase me please', signature: 's' }] })]);
    expect(await placesHolding('erase me please')).toEqual(['model_reasoning']);
    await new PostgresConversationEraser(db.pool).erase('t', 'erased');
    expect(await placesHolding('erase me please')).toEqual([]);
    expect(await db.pool.query(`SELECT 1 FROM model_responses WHERE conversation_id = 'erased'`).then((r) => r.rowCount)).toBe(0);
  });
  it('applies any sequence of steps as the rules say, one after another (turn deletes in one statement)', async () => {
    const turns = ['message:u1', 'message:u2', 'run:r3'];
    const stepArbitrary = (tenantId: string): fc.Arbitrary<ReasoningStep> => {
      const conversation = fc.constantFrom('c1', 'c2').map((conversationId) => ({ tenantId, conversationId }));
      const at = fc.record({ conversation, runId: fc.constantFrom('r1', 'r2'), roundIndex: fc.nat(1) });
      return fc.oneof(
        fc
          .record({ at, turn: fc.constantFrom(...turns), keep: fc.constantFrom('turn' as const, 'always' as const) })
          .map(({ at: { conversation, runId, roundIndex }, turn, keep }): ReasoningStep => ({
            kind: 'keep',
            reasoning: {
              ...conversation,
              runId,
              roundIndex,
              turn,
              keep,
              eventId: randomUUID(),
              state: { reasoning: [] },
              bytes: 2,
              tokens: 1,
            },
          })),
        fc.record({ conversation, turn: fc.constantFrom(...turns), kind: fc.constantFrom('end-turn' as const, 'other-turns' as const) }),
        fc
          .record({ at, keep: fc.constantFrom('turn' as const, 'never' as const) })
          .map(({ at: { conversation, runId, roundIndex }, keep }): ReasoningStep => ({
            kind: 'tool-rule',
            run: { ...conversation, runId },
            roundIndex,
            keep,
          })),
      );
    };
    await fc.assert(
      fc.asyncProperty(
        fc
          .string({ minLength: 1, maxLength: 8 })
          .chain((suffix) => fc.array(stepArbitrary(`steps-${suffix}-${randomUUID()}`), { maxLength: 25 })),
        async (steps) => {
          await inTransaction(db.pool, (client) => applyReasoningSteps(client, steps));
          const expected = new InMemoryReasoning();
          expected.apply(steps);
          const tenants = [
            ...new Set(
              steps.map((s) =>
                s.kind === 'keep' ? s.reasoning.tenantId : s.kind === 'tool-rule' ? s.run.tenantId : s.conversation.tenantId,
              ),
            ),
          ];
          const { rows } = await db.pool.query<{ event_id: string; keep: string }>(
            'SELECT event_id, keep FROM model_reasoning WHERE tenant_id = ANY($1::text[]) ORDER BY event_id',
            [tenants],
          );
          expect(rows).toEqual(
            [...expected.rows.values()]
              .map((r) => ({ event_id: r.eventId, keep: r.keep }))
              .sort((a, b) => a.event_id.localeCompare(b.event_id)),
          );
        },
      ),
      { numRuns: 40 },
    );
  });
});
