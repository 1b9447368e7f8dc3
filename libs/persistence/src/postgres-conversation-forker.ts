import { createHash } from 'node:crypto';
import type { Pool, PoolClient } from 'pg';
import {
  type ConversationForker,
  conversationKeyString,
  type ForkOutcome,
  type ForkRequest,
  type PayloadVault,
  planFork,
  sealCopies,
  storedForm,
  projectEvents,
  type StreamRef,
  type TokenCounter,
} from '@toolhistory/domain';
import { AppError, ErrorCode } from '@toolhistory/errors';
import { inTransaction } from './in-transaction';
import { allocateStreamPositions, insertEvents } from './postgres-event-append';
import { openRecorded, type RecordedRow, SELECT_RECORDED } from './postgres-event-store';
import { loadReadModelState, writeReadModelChanges } from './postgres-read-model-writer';

/** The namespace of a fork's copy ids: a UUID of its own, so they can meet no producer's ids. */
const FORK_NAMESPACE = Buffer.from('6f1d2c59a4b34e0f9a1e7c3d5b8f0a24', 'hex');

/** The copy of `sourceEventId` in the fork `target`: name-based (version 5), the same on every repeat of the fork. */
export function forkedEventId(target: StreamRef, sourceEventId: string): string {
  const hash = createHash('sha1')
    .update(FORK_NAMESPACE)
    .update(JSON.stringify([target.tenantId, target.conversationId, sourceEventId.toLowerCase()]), 'utf8')
    .digest();
  hash[6] = (hash[6] & 0x0f) | 0x50;
  hash[8] = (hash[8] & 0x3f) | 0x80;
  const hex = hash.subarray(0, 16).toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/**
 * A fork in one transaction (docs/adr/026): the source's stream row locked
 * so nothing is erased meanwhile, the new stream claimed, the copies
 * appended through the recorder's append path, projected into the read
 * model with them, and the fork's lineage kept for erasure. Search finds
 * the copies once its projections reach them, as it finds recorded events.
 */
export class PostgresConversationForker implements ConversationForker {
  constructor(
    private readonly pool: Pool,
    private readonly tokens: TokenCounter,
    /** Encryption at rest (docs/adr/033): the source's payloads opened, the copies sealed as the fork's own. */
    private readonly vault: PayloadVault | null = null,
  ) {}

  fork(request: ForkRequest): Promise<ForkOutcome> {
    const source = { tenantId: request.tenantId, conversationId: request.conversationId };
    const target = { tenantId: request.tenantId, conversationId: request.newConversationId };
    return inTransaction(this.pool, async (client) => {
      // Stream rows in the recorder's order (conversation key), so a fork and a batch never wait on each other in a cycle.
      const sourceFirst = conversationKeyString(source) < conversationKeyString(target);
      if (sourceFirst) await lockSource(client, source);
      const targetVersion = await claimTarget(client, target);
      if (!sourceFirst) await lockSource(client, source);
      if (targetVersion > 0) return repeatedFork(client, request);
      const { rows } = await client.query<RecordedRow>(
        `${SELECT_RECORDED} WHERE tenant_id = $1 AND conversation_id = $2 ORDER BY stream_position`,
        [source.tenantId, source.conversationId],
      );
      if (this.vault === null && rows.some((r) => (r.payload as { sealed?: unknown }).sealed !== undefined))
        throw new AppError(
          ErrorCode.KeyUnavailable,
          'the conversation rests sealed, and this process has no keyring and key store to copy it',
        );
      const plan = planFork(source, await openRecorded(rows, this.vault), request.upToMessageId, {
        ...target,
        copyEventId: (id) => forkedEventId(target, id),
      });
      if (!plan.found) {
        throw new AppError(ErrorCode.NotFound, `message ${JSON.stringify(request.upToMessageId)} is not a message of the conversation`);
      }
      const copies = this.vault ? await sealCopies(plan.copies, this.vault, Date.now()) : plan.copies;
      const { positioned } = await allocateStreamPositions(client, copies.map(storedForm));
      await insertEvents(client, positioned);
      const changes = projectEvents(await loadReadModelState(client, copies), copies, this.tokens);
      await writeReadModelChanges(client, changes, 'events');
      await client.query(
        `INSERT INTO conversation_forks (tenant_id, conversation_id, source_conversation_id, up_to_message_id, up_to_position)
         VALUES ($1, $2, $3, $4, $5)`,
        [target.tenantId, target.conversationId, source.conversationId, request.upToMessageId, plan.upToPosition],
      );
      return { copiedInvocations: changes.invocations.length, position: positioned.at(-1)!.globalPosition };
    });
  }
}

/** Shares the source's stream row until commit: an erasure of the source waits for the fork, then reaches its copies. */
async function lockSource(client: PoolClient, source: StreamRef): Promise<void> {
  const { rows } = await client.query<{ erased: boolean }>(
    'SELECT erased_at IS NOT NULL AS erased FROM streams WHERE tenant_id = $1 AND conversation_id = $2 FOR SHARE',
    [source.tenantId, source.conversationId],
  );
  if (rows.length === 0 || rows[0].erased) throw new AppError(ErrorCode.NotFound, 'the conversation to fork has no recorded events');
}

/** Takes the new conversation's stream row (creating it); answers its version, refusing an erased one. */
async function claimTarget(client: PoolClient, target: StreamRef): Promise<number> {
  const { rows } = await client.query<{ version: number; erased: boolean }>(
    `INSERT INTO streams (tenant_id, conversation_id, version) VALUES ($1, $2, 0)
     ON CONFLICT (tenant_id, conversation_id) DO UPDATE SET version = streams.version
     RETURNING version, erased_at IS NOT NULL AS erased`,
    [target.tenantId, target.conversationId],
  );
  if (rows[0].erased) throw new AppError(ErrorCode.AlreadyExists, 'new_conversation_id names an erased conversation; choose another id');
  return rows[0].version;
}

/** The same fork asked again answers the fork as it stands; anything else in the new conversation is refused. */
async function repeatedFork(client: PoolClient, request: ForkRequest): Promise<ForkOutcome> {
  const { rows } = await client.query<{ same: boolean; invocations: string; position: string }>(
    `SELECT f.source_conversation_id = $3 AND f.up_to_message_id = $4 AS same,
            (SELECT count(*) FROM invocations i WHERE i.tenant_id = $1 AND i.conversation_id = $2)::text AS invocations,
            (SELECT max(global_position) FROM events e WHERE e.tenant_id = $1 AND e.conversation_id = $2)::text AS position
     FROM conversation_forks f WHERE f.tenant_id = $1 AND f.conversation_id = $2`,
    [request.tenantId, request.newConversationId, request.conversationId, request.upToMessageId],
  );
  if (rows.length === 0 || !rows[0].same) {
    throw new AppError(ErrorCode.AlreadyExists, 'new_conversation_id already holds a conversation; choose another id');
  }
  return { copiedInvocations: Number(rows[0].invocations), position: rows[0].position };
}
