import type { Pool, PoolClient } from 'pg';
import type { ReasoningStep, ReasoningStore } from '@toolhistory/domain';
import { inTransaction } from './in-transaction';

/**
 * Applies the recorder's reasoning steps (reasoning-apart.ts) in order, in
 * the caller's transaction: a round's state written apart from its event,
 * a turn's `turn` state deleted when it ends or the conversation moves on,
 * a round's state kept by a stricter tool rule (or deleted, `never`).
 */
export async function applyReasoningSteps(client: PoolClient, steps: readonly ReasoningStep[]): Promise<void> {
  let turnDeletes: TurnDelete[] = [];
  for (const step of steps) {
    // A turn's end (a run's answer) or a move to another turn (a response) is a step of nearly every run: the
    // consecutive ones go in one statement. Deletes of rows by their own fields commute, so applying them at
    // once deletes what applying them in turn would.
    if (step.kind === 'end-turn' || step.kind === 'other-turns') {
      turnDeletes.push(step);
      continue;
    }
    await deleteTurns(client, turnDeletes);
    turnDeletes = [];
    switch (step.kind) {
      case 'keep': {
        const r = step.reasoning;
        await client.query(
          `INSERT INTO model_reasoning (event_id, tenant_id, conversation_id, run_id, round_index, turn, keep, state, state_seal, bytes, tokens)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8::json, $9::jsonb, $10, $11) ON CONFLICT (event_id) DO NOTHING`,
          [
            r.eventId,
            r.tenantId,
            r.conversationId,
            r.runId,
            r.roundIndex,
            r.turn,
            r.keep,
            r.sealedState ? null : JSON.stringify(r.state),
            r.sealedState ? JSON.stringify(r.sealedState) : null,
            r.bytes,
            r.tokens,
          ],
        );
        break;
      }
      case 'tool-rule': {
        const where = 'tenant_id = $1 AND conversation_id = $2 AND run_id = $3 AND round_index = $4';
        const key = [step.run.tenantId, step.run.conversationId, step.run.runId, step.roundIndex];
        if (step.keep === 'never') await client.query(`DELETE FROM model_reasoning WHERE ${where}`, key);
        else if (step.keep === 'turn')
          await client.query(`UPDATE model_reasoning SET keep = 'turn' WHERE ${where} AND keep = 'always'`, key);
        break;
      }
    }
  }
  await deleteTurns(client, turnDeletes);
}

type TurnDelete = Extract<ReasoningStep, { kind: 'end-turn' | 'other-turns' }>;

/**
 * The `turn` state of each step's conversation, of its turn (end-turn) or of
 * every other turn (other-turns), in one statement: each step looks its
 * conversation's rows up by the turn index.
 */
async function deleteTurns(client: PoolClient, steps: readonly TurnDelete[]): Promise<void> {
  if (steps.length === 0) return;
  await client.query(
    `DELETE FROM model_reasoning m USING unnest($1::text[], $2::text[], $3::text[], $4::bool[]) AS s(tenant_id, conversation_id, turn, others)
     WHERE m.tenant_id = s.tenant_id AND m.conversation_id = s.conversation_id AND m.keep = 'turn'
       AND (m.turn = s.turn) <> s.others`,
    [
      steps.map((s) => s.conversation.tenantId),
      steps.map((s) => s.conversation.conversationId),
      steps.map((s) => s.turn),
      steps.map((s) => s.kind === 'other-turns'),
    ],
  );
}

/** The steps in a transaction of their own: where events rest in another store (EventStoreDB), the state still rests here. */
export class PostgresReasoningStore implements ReasoningStore {
  constructor(private readonly pool: Pool) {}

  apply(steps: readonly ReasoningStep[]): Promise<void> {
    if (steps.length === 0) return Promise.resolve();
    return inTransaction(this.pool, (client) => applyReasoningSteps(client, steps));
  }
}
