import type { SealedPayload } from '@toolhistory/contract';

/** The read model's fields that hold a payload (docs/adr/033): what retention expires and encryption seals. */
export type PayloadField = 'arguments' | 'result' | 'approvalRequestReason' | 'approvalDecisionReason';
export const PAYLOAD_FIELDS: readonly PayloadField[] = Object.freeze([
  'arguments',
  'result',
  'approvalRequestReason',
  'approvalDecisionReason',
]);

/** The member of its event's sealed payload each field holds. */
export const SEALED_MEMBER_OF: Readonly<Record<PayloadField, string>> = Object.freeze({
  arguments: 'arguments',
  result: 'result',
  approvalRequestReason: 'reason',
  approvalDecisionReason: 'reason',
});

/** Per payload field of an invocation, the sealed payload of the event it came from. */
export type InvocationSeals = Partial<Record<PayloadField, SealedPayload>>;

/** The seals with one more field's, when its event was sealed; unchanged for an event in clear. */
export function withSeal(
  seals: InvocationSeals | null | undefined,
  field: PayloadField,
  sealed: SealedPayload | undefined,
): InvocationSeals | null {
  if (sealed === undefined) return seals ?? null;
  return { ...(seals ?? {}), [field]: sealed };
}

/** The earliest end of retention among the seals: when the sweeper has work on the row next; null when none ends. */
export function earliestExpiry(seals: InvocationSeals | null | undefined): string | null {
  let earliest: string | null = null;
  let earliestMs = Number.POSITIVE_INFINITY;
  for (const seal of Object.values(seals ?? {})) {
    if (seal?.expiresAt === undefined || seal.expiresAt === null) continue;
    const ms = Date.parse(seal.expiresAt);
    if (ms < earliestMs) {
      earliestMs = ms;
      earliest = seal.expiresAt;
    }
  }
  return earliest;
}

/** The fields whose retention has ended by `nowMs`: swept already, or due. */
export function expiredPayloadFields(
  row: { payloadSeals?: InvocationSeals | null; expiredPayloads?: readonly PayloadField[] },
  nowMs: number,
): PayloadField[] {
  const expired = new Set(row.expiredPayloads ?? []);
  for (const field of PAYLOAD_FIELDS) {
    const expiresAt = row.payloadSeals?.[field]?.expiresAt;
    if (typeof expiresAt === 'string' && Date.parse(expiresAt) <= nowMs) expired.add(field);
  }
  return PAYLOAD_FIELDS.filter((f) => expired.has(f));
}

type RowWithSeals = { payloadSeals?: InvocationSeals | null; expiredPayloads?: readonly PayloadField[] };

/**
 * Per rows array (rows are never changed in place: a cached conversation's
 * are read once and answer many requests), the earliest end of retention
 * among its payloads not yet marked expired; +Infinity when none ends.
 */
const nextExpiryOf = new WeakMap<readonly RowWithSeals[], number>();

/**
 * Rows as they stand at `nowMs`: a payload whose retention has ended since
 * the rows were read (a cached conversation) is gone, whatever moment a
 * request asks about. The same array when nothing expired: before the
 * rows' next end of retention that is known without looking at each row
 * again, so a cached conversation's requests cost nothing here.
 */
export function withPayloadsExpiredBy<R extends RowWithSeals>(rows: readonly R[], nowMs: number): readonly R[] {
  let nextExpiry = nextExpiryOf.get(rows);
  if (nextExpiry === undefined) nextExpiryOf.set(rows, (nextExpiry = nextExpiryAmong(rows)));
  if (nowMs < nextExpiry) return rows;
  let changed = false;
  const out = rows.map((row) => {
    if (!row.payloadSeals) return row;
    const expired = expiredPayloadFields(row, nowMs);
    if (expired.length === (row.expiredPayloads?.length ?? 0)) return row;
    changed = true;
    return { ...row, expiredPayloads: expired, ...Object.fromEntries(expired.map((f) => [f, f === 'arguments' ? {} : null])) };
  });
  return changed ? out : rows;
}

/** The earliest end of retention among the rows' payloads not yet marked expired (ms); +Infinity when none ends. */
function nextExpiryAmong(rows: readonly RowWithSeals[]): number {
  let next = Number.POSITIVE_INFINITY;
  for (const row of rows) {
    if (!row.payloadSeals) continue;
    for (const field of PAYLOAD_FIELDS) {
      const expiresAt = row.payloadSeals[field]?.expiresAt;
      if (typeof expiresAt !== 'string' || row.expiredPayloads?.includes(field)) continue;
      const ms = Date.parse(expiresAt);
      if (ms < next) next = ms;
    }
  }
  return next;
}
