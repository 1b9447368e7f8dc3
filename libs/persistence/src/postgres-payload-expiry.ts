import type { Pool, PoolClient } from 'pg';
import { type ConversationKey, conversationKeyString, type InvocationKey, type PayloadVault } from '@toolhistory/domain';
import { inTransaction } from './in-transaction';
import { notifyConversationsChanged } from './postgres-conversation-changes';
import { classifyPostgresError } from './postgres-errors';
import { lockConversationsForSearch, refreshSearchDocuments } from './postgres-search-documents';
import { isoText } from './sql-rows';

/** What one sweep of the read model removed. */
export interface ExpirySweep {
  /** Payload fields whose retention ended (arguments, results, approval reasons). */
  payloads: number;
  invocations: number;
  conversations: number;
}

/** What is due, for `toolhistory retention status`. */
export interface ExpiryStatus {
  /** Payload fields past their end of retention that the sweeper has not removed yet. */
  duePayloads: number;
  /** Payload fields that will expire, and the earliest end among them. */
  expiringPayloads: number;
  nextExpiry: string | null;
  /** Payload fields removed so far. */
  expiredPayloads: number;
}

/** Conversations swept per transaction: their search locks and stream rows are held until it commits. */
const CONVERSATIONS_PER_BATCH = 50;
/** Rows swept per transaction at most. */
const ROWS_PER_BATCH = 2_000;

/**
 * The read model's side of retention (docs/adr/033): rows whose sealed
 * payloads reached their end of retention lose them (the seals, a row's
 * own copies, and the search documents made of them), and note which
 * expired, so nothing of a payload is kept in clear or sealed in the read
 * model once it is due. The data keys are destroyed after, by the caller
 * (the sweeper): every other copy (the events, backups) is unreadable then.
 *
 * Per batch of conversations, one transaction takes the locks erasure
 * takes, in its order: the search lock (no document is being written from
 * these rows) then the stream rows (no batch of the recorder is changing
 * them), so a payload expires exactly once and no late document brings it
 * back.
 */
export class PostgresPayloadExpiry {
  constructor(
    private readonly pool: Pool,
    /** Opens what is left of a partly expired invocation, to make its documents again. */
    private readonly vault: PayloadVault | null,
  ) {}

  async sweep(now: Date, maxRows = Number.POSITIVE_INFINITY): Promise<ExpirySweep> {
    const total: ExpirySweep = { payloads: 0, invocations: 0, conversations: 0 };
    try {
      while (total.invocations < maxRows) {
        const batch = await inTransaction(this.pool, (client) => this.sweepBatch(client, now));
        if (batch.invocations === 0) break;
        total.payloads += batch.payloads;
        total.invocations += batch.invocations;
        total.conversations += batch.conversations;
      }
      return total;
    } catch (error) {
      throw classifyPostgresError(error);
    }
  }

  async status(now: Date): Promise<ExpiryStatus> {
    try {
      const { rows } = await this.pool.query<ExpiryStatus>(
        `SELECT coalesce(sum(s.due), 0)::int AS "duePayloads", coalesce(sum(s.expiring), 0)::int AS "expiringPayloads",
           ${isoText('min(s.next)')} AS "nextExpiry",
           (SELECT coalesce(sum(cardinality(expired_payloads)), 0)::int FROM invocations WHERE expired_payloads <> '{}') AS "expiredPayloads"
         FROM invocations i, LATERAL (
           SELECT count(*) FILTER (WHERE (v ->> 'expiresAt')::timestamptz <= $1) AS due, count(*) AS expiring,
             min((v ->> 'expiresAt')::timestamptz) FILTER (WHERE (v ->> 'expiresAt')::timestamptz > $1) AS next
           FROM jsonb_each(i.payload_seals) AS e(k, v) WHERE v ->> 'expiresAt' IS NOT NULL) s
         WHERE i.payloads_expire_at IS NOT NULL`,
        [now.toISOString()],
      );
      return rows[0];
    } catch (error) {
      throw classifyPostgresError(error);
    }
  }

  private async sweepBatch(client: PoolClient, now: Date): Promise<ExpirySweep> {
    const at = now.toISOString();
    const { rows: due } = await client.query<{ tenantId: string; conversationId: string }>(
      `SELECT DISTINCT tenant_id AS "tenantId", conversation_id AS "conversationId"
       FROM (SELECT tenant_id, conversation_id FROM invocations WHERE payloads_expire_at <= $1
             ORDER BY payloads_expire_at LIMIT ${ROWS_PER_BATCH}) d LIMIT ${CONVERSATIONS_PER_BATCH}`,
      [at],
    );
    if (due.length === 0) return { payloads: 0, invocations: 0, conversations: 0 };
    const conversations = sorted(due);
    await lockConversationsForSearch(client, conversations, 'exclusive');
    await client.query(
      `SELECT 1 FROM streams s JOIN unnest($1::text[], $2::text[]) WITH ORDINALITY AS k(tenant_id, conversation_id, n)
         ON s.tenant_id = k.tenant_id AND s.conversation_id = k.conversation_id
       ORDER BY k.n FOR SHARE OF s`,
      [conversations.map((c) => c.tenantId), conversations.map((c) => c.conversationId)],
    );
    // Each due row: the seals still ahead kept, the rest noted as expired, the row's own copies of them cleared.
    const { rows: swept } = await client.query<InvocationKey & { expired: number }>(
      `WITH due AS (
         SELECT i.tenant_id, i.conversation_id, i.run_id, i.pair_key,
           (SELECT jsonb_object_agg(e.k, e.v) FROM jsonb_each(i.payload_seals) AS e(k, v)
             WHERE e.v ->> 'expiresAt' IS NULL OR (e.v ->> 'expiresAt')::timestamptz > $3) AS kept,
           ARRAY(SELECT e.k FROM jsonb_each(i.payload_seals) AS e(k, v)
             WHERE (e.v ->> 'expiresAt')::timestamptz <= $3 ORDER BY e.k) AS gone
         FROM invocations i JOIN unnest($1::text[], $2::text[]) AS c(tenant_id, conversation_id)
           ON i.tenant_id = c.tenant_id AND i.conversation_id = c.conversation_id
         WHERE i.payloads_expire_at <= $3
         FOR UPDATE OF i)
       UPDATE invocations i SET
         payload_seals = d.kept,
         expired_payloads = ARRAY(SELECT DISTINCT f FROM unnest(i.expired_payloads || d.gone) AS f ORDER BY f),
         payloads_expire_at = (SELECT min((e.v ->> 'expiresAt')::timestamptz) FROM jsonb_each(d.kept) AS e(k, v)),
         arguments = CASE WHEN 'arguments' = ANY(d.gone) THEN NULL ELSE i.arguments END,
         result = CASE WHEN 'result' = ANY(d.gone) THEN NULL ELSE i.result END,
         approval_request_reason = CASE WHEN 'approvalRequestReason' = ANY(d.gone) THEN NULL ELSE i.approval_request_reason END,
         approval_decision_reason = CASE WHEN 'approvalDecisionReason' = ANY(d.gone) THEN NULL ELSE i.approval_decision_reason END
       FROM due d
       WHERE i.tenant_id = d.tenant_id AND i.conversation_id = d.conversation_id AND i.run_id = d.run_id AND i.pair_key = d.pair_key
       RETURNING i.tenant_id AS "tenantId", i.conversation_id AS "conversationId", i.run_id AS "runId", i.pair_key AS "pairKey",
         cardinality(d.gone) AS expired`,
      [conversations.map((c) => c.tenantId), conversations.map((c) => c.conversationId), at],
    );
    // The documents made again from what is left; those of invocations with nothing left go.
    await refreshSearchDocuments(client, swept, { vault: this.vault, nowMs: now.getTime() });
    await notifyConversationsChanged(client, conversations);
    return {
      payloads: swept.reduce((sum, row) => sum + row.expired, 0),
      invocations: swept.length,
      conversations: conversations.length,
    };
  }
}

function sorted(conversations: readonly ConversationKey[]): ConversationKey[] {
  return [...conversations].sort((a, b) => (conversationKeyString(a) < conversationKeyString(b) ? -1 : 1));
}
