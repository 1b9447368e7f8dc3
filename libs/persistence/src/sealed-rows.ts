import type { JsonValue, SealedPayload } from '@toolhistory/contract';
import {
  expiredPayloadFields,
  type InvocationSeals,
  PAYLOAD_FIELDS,
  type PayloadField,
  type PayloadVault,
  type RecordedResponse,
  SEALED_MEMBER_OF,
} from '@toolhistory/domain';
import { AppError, ErrorCode } from '@toolhistory/errors';

/** The fields of a read row that may hold a payload, and what says where it rests. */
export interface RowWithPayloads {
  tenantId: string;
  conversationId: string;
  arguments: unknown;
  result: unknown;
  approvalRequestReason: string | null;
  approvalDecisionReason: string | null;
  payloadSeals?: InvocationSeals | null;
  expiredPayloads?: readonly PayloadField[];
}

/** What an expired payload reads as: nothing, in the shape its field has. */
const NOTHING: Readonly<Record<PayloadField, unknown>> = Object.freeze({
  arguments: {},
  result: null,
  approvalRequestReason: null,
  approvalDecisionReason: null,
});

/**
 * Opens the sealed payloads of rows read from the read model, in one call
 * to the vault (docs/adr/033): each field gets its payload in clear, or,
 * once its retention has ended or its data key is gone, nothing (and is
 * listed in `expiredPayloads`). Seals keep their key and end of retention
 * only. Rows in clear come back as they are. Callers have checked the
 * caller's access before reading: opening adds no way in.
 */
export async function openInvocationPayloads<R extends RowWithPayloads>(
  rows: readonly R[],
  vault: PayloadVault | null,
  nowMs: number = Date.now(),
): Promise<R[]> {
  // Rows in clear (encryption at rest off, or recorded before it) come back as they are.
  if (!rows.some((row) => row.payloadSeals || row.expiredPayloads?.length)) return [...rows];
  const requests: Array<{ row: number; field: PayloadField }> = [];
  const out = rows.map((row) => ({ ...row }));
  out.forEach((row, index) => {
    if (!row.payloadSeals && !row.expiredPayloads?.length) return;
    const expired = new Set(expiredPayloadFields(row, nowMs));
    for (const field of PAYLOAD_FIELDS) {
      if (expired.has(field)) (row as Record<string, unknown>)[field] = NOTHING[field];
      else if (row.payloadSeals?.[field] !== undefined) requests.push({ row: index, field });
    }
    row.expiredPayloads = PAYLOAD_FIELDS.filter((f) => expired.has(f));
  });
  if (requests.length > 0) {
    if (vault === null)
      throw new AppError(
        ErrorCode.KeyUnavailable,
        'payloads rest sealed, and this process has no keyring and key store to open them (ENCRYPTION_KEYRING_FILE, KEYSTORE_URL)',
      );
    const opened = await vault.open(
      requests.map(({ row, field }) => ({
        tenantId: out[row].tenantId,
        conversationId: out[row].conversationId,
        sealed: out[row].payloadSeals![field]!,
      })),
    );
    requests.forEach(({ row, field }, i) => {
      const target = out[row] as unknown as Record<PayloadField, unknown> & Pick<RowWithPayloads, 'expiredPayloads'>;
      const plaintext = opened[i];
      if (plaintext === null || plaintext === undefined) {
        target[field] = NOTHING[field];
        target.expiredPayloads = PAYLOAD_FIELDS.filter((f) => f === field || target.expiredPayloads?.includes(f));
      } else {
        target[field] = (JSON.parse(plaintext) as Record<string, JsonValue>)[SEALED_MEMBER_OF[field]] ?? NOTHING[field];
      }
    });
  }
  for (const row of out) if (row.payloadSeals) row.payloadSeals = notesOf(row.payloadSeals);
  return out;
}

/** Seals without their bytes: what stays with a row once opened (the key, the end of retention). */
function notesOf(seals: InvocationSeals): InvocationSeals {
  const out: InvocationSeals = {};
  for (const [field, seal] of Object.entries(seals) as Array<[PayloadField, NonNullable<InvocationSeals[PayloadField]>]>)
    if (seal) out[field] = { key: seal.key, expiresAt: seal.expiresAt };
  return out;
}

/** A response as read, before its text and reasoning state are opened: what rests sealed rests in its seal. */
export type SealedResponse = RecordedResponse & { stateSeal?: SealedPayload | null };

/**
 * Opens the responses' sealed texts and reasoning states, in one call to
 * the vault: each comes back in clear, or, once its retention has ended or
 * its data key is gone, as nothing (no text; no state, so the reasoning
 * reads as expired). Responses in clear come back as they are; no seal's
 * bytes stay with a row.
 */
export async function openResponsePayloads(
  responses: readonly SealedResponse[],
  vault: PayloadVault | null,
  nowMs: number = Date.now(),
): Promise<RecordedResponse[]> {
  const live = (seal: SealedPayload | null | undefined): seal is SealedPayload =>
    seal !== null && seal !== undefined && (seal.expiresAt === null || Date.parse(seal.expiresAt) > nowMs);
  const requests = responses.flatMap((r, index) => [
    ...(live(r.textSeal) ? [{ index, what: 'text' as const, sealed: r.textSeal }] : []),
    ...(live(r.stateSeal) ? [{ index, what: 'state' as const, sealed: r.stateSeal }] : []),
  ]);
  const out = responses.map(({ stateSeal, textSeal, ...r }): RecordedResponse => ({
    ...r,
    ...(textSeal ? { text: null } : {}),
    ...(stateSeal ? { state: null } : {}),
  }));
  if (requests.length === 0) return out;
  if (vault === null)
    throw new AppError(
      ErrorCode.KeyUnavailable,
      'responses rest sealed, and this process has no keyring and key store to open them (ENCRYPTION_KEYRING_FILE, KEYSTORE_URL)',
    );
  const opened = await vault.open(
    requests.map(({ index, sealed }) => ({ tenantId: out[index].tenantId, conversationId: out[index].conversationId, sealed })),
  );
  requests.forEach(({ index, what }, i) => {
    const plaintext = opened[i];
    if (plaintext === null || plaintext === undefined) return;
    if (what === 'text') out[index].text = ((JSON.parse(plaintext) as { text?: string }).text ?? null) as string | null;
    else out[index].state = JSON.parse(plaintext) as RecordedResponse['state'];
  });
  // A state gone with its key is no reasoning to count.
  for (const r of out) if (r.state === null) r.reasoningTokens = 0;
  return out;
}
