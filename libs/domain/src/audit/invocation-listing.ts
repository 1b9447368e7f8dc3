import type { InvocationRow } from '../projection/read-model.types';

/**
 * Audit listing of invocations: filters, a stable order and opaque page
 * tokens. Order: by the invocation's time (its call's, else its result's),
 * then conversation, run, round, sequence and pair key, so the calls of a
 * parallel batch recorded in the same instant list in their order, and a
 * page boundary is exact.
 */
export type InvocationStatus = 'pending' | 'succeeded' | 'error';

export interface InvocationFilter {
  tenantId: string;
  conversationId?: string;
  runId?: string;
  toolName?: string;
  status?: InvocationStatus;
  /** Inclusive lower and exclusive upper bound on the invocation's time, ISO-8601. */
  from?: string;
  to?: string;
}

export interface InvocationCursor {
  at: string;
  conversationId: string;
  runId: string;
  roundIndex: number;
  sequenceIndex: number;
  pairKey: string;
}

/** An invocation as audit sees it: the read-model row's facts, with its sort time and duration. */
export interface InvocationRecord extends Pick<
  InvocationRow,
  | 'tenantId'
  | 'conversationId'
  | 'runId'
  | 'pairKey'
  | 'roundIndex'
  | 'sequenceIndex'
  | 'toolCallId'
  | 'toolName'
  | 'isError'
  | 'requestedAt'
  | 'completedAt'
  | 'persist'
  | 'producerRedacted'
  | 'argumentRedactions'
  | 'resultRedactions'
  | 'argumentsBytes'
  | 'resultBytes'
  | 'approvalRequestedAt'
  | 'approvalRequestReason'
  | 'approvalDecidedAt'
  | 'approved'
  | 'approvalDecidedBy'
  | 'approvalDecisionReason'
  | 'resultRunId'
  | 'forkedFrom'
  | 'payloadSeals'
  | 'expiredPayloads'
> {
  arguments: unknown;
  result: unknown;
  /** The size in bytes of the reasoning recorded with the call's round (0: none); never its content. */
  reasoningBytes?: number;
  /** The listing's sort time: requestedAt, else completedAt. */
  at: string;
  durationMs: number | null;
  /** The trace id the producer sent with the call (else the result), when it sent one. */
  traceId: string | null;
}

export const DEFAULT_PAGE_SIZE = 100;
export const MAX_PAGE_SIZE = 1_000;

export type Checked<T> = { ok: true; value: T } | { ok: false; error: string };

export function pageSizeOf(requested: number | undefined): Checked<number> {
  if (requested === undefined || requested === 0) return { ok: true, value: DEFAULT_PAGE_SIZE };
  if (!Number.isInteger(requested) || requested < 0) return { ok: false, error: 'page_size must be a whole number, 0 or more' };
  return { ok: true, value: Math.min(requested, MAX_PAGE_SIZE) };
}

/** Pending until a result is recorded (completedAt is the result's time). */
export function statusOf(record: Pick<InvocationRecord, 'completedAt' | 'isError'>): InvocationStatus {
  if (record.completedAt === null) return 'pending';
  return record.isError ? 'error' : 'succeeded';
}

/** A token is only valid with the filter it was issued for (FNV-1a over the filter: a check, not a secret). */
function fingerprint(filter: InvocationFilter): string {
  const { tenantId, conversationId, runId, toolName, status, from, to } = filter;
  const text = JSON.stringify([tenantId, conversationId, runId, toolName, status, from, to]);
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i += 1) hash = Math.imul(hash ^ text.charCodeAt(i), 0x01000193);
  return (hash >>> 0).toString(36);
}

export function encodePageToken(filter: InvocationFilter, last: InvocationCursor): string {
  const cursor = [last.at, last.conversationId, last.runId, last.roundIndex, last.sequenceIndex, last.pairKey];
  return Buffer.from(JSON.stringify({ f: fingerprint(filter), c: cursor })).toString('base64url');
}

export function decodePageToken(filter: InvocationFilter, token: string | undefined): Checked<InvocationCursor | null> {
  if (!token) return { ok: true, value: null };
  try {
    const decoded = JSON.parse(Buffer.from(token, 'base64url').toString('utf8')) as { f?: unknown; c?: unknown };
    const c = decoded.c;
    const wellFormed =
      Array.isArray(c) &&
      c.length === 6 &&
      [c[0], c[1], c[2], c[5]].every((v) => typeof v === 'string') &&
      [c[3], c[4]].every((v) => Number.isSafeInteger(v)) &&
      !Number.isNaN(Date.parse(c[0] as string));
    if (!wellFormed) throw new Error('shape');
    if (decoded.f !== fingerprint(filter)) return { ok: false, error: 'page_token belongs to a listing with other filters' };
    const [at, conversationId, runId, roundIndex, sequenceIndex, pairKey] = c as [string, string, string, number, number, string];
    return { ok: true, value: { at, conversationId, runId, roundIndex, sequenceIndex, pairKey } };
  } catch {
    return { ok: false, error: 'page_token is not a token this service issued' };
  }
}
