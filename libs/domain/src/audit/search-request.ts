import { idProblem } from '@toolhistory/errors';
import type { Checked, InvocationRecord } from './invocation-listing';

/**
 * Search over a tenant's invocations (tool names and the redacted arguments
 * and results): what a request may ask and how it is normalized before it
 * reaches storage. How text is matched and ranked is the storage's concern
 * (docs/adr/006-full-text-search.md, docs/adr/025-substring-search.md).
 */
export const DEFAULT_SEARCH_LIMIT = 20;
export const MAX_SEARCH_LIMIT = 100;
/**
 * Longer queries are cut to this many characters rather than refused: a
 * search box should answer whatever is pasted into it, and the cut bounds
 * the work one query can cause.
 */
export const MAX_QUERY_CHARS = 1_000;
/**
 * The shortest substring query. A trigram index finds a text by its runs of
 * three characters; a shorter text has none, so it could only be found by
 * reading every row of the tenant.
 */
export const MIN_SUBSTRING_CHARS = 3;

/**
 * How a query matches: `words`, free text as in a web search box (ranked);
 * `substring`, one literal text anywhere, case-insensitive (newest first).
 */
export type SearchMatch = 'words' | 'substring';
/** Where a hit's query matched: the call's tool name or arguments, the result. In this order. */
export type SearchHitField = 'toolName' | 'arguments' | 'result';
export const SEARCH_HIT_FIELDS: readonly SearchHitField[] = ['toolName', 'arguments', 'result'];

/** A search as it arrives; times in epoch milliseconds. */
export interface SearchRequest {
  tenantId: string;
  query: string;
  conversationId?: string;
  /** Inclusive lower and exclusive upper bound on the invocation's time. */
  from?: number;
  to?: number;
  /** 0 or unset: the default. */
  limit?: number;
  /** Unset: `words`. */
  match?: SearchMatch;
}

/** A validated search, as the AuditReader port takes it; times ISO-8601. */
export interface SearchQuery {
  tenantId: string;
  /** `words`: free text as typed into a web search box; `substring`: the literal text. Never empty. */
  query: string;
  match: SearchMatch;
  conversationId?: string;
  from?: string;
  to?: string;
  limit: number;
}

export interface SearchHit {
  invocation: InvocationRecord;
  /** Relevance, higher is better; only comparable within one answer. */
  score: number;
  /** An excerpt of the searchable text with the matched words marked. */
  snippet: string;
  /** Where the query matched, in the order of SEARCH_HIT_FIELDS; never empty. */
  matchedIn: SearchHitField[];
}

// PostgreSQL text cannot hold NUL, and no control character means anything in a query.
// eslint-disable-next-line no-control-regex -- matching control characters is the point
const CONTROL_CHARACTERS = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/g;
// The range of google.protobuf.Timestamp (0001-01-01 to 9999-12-31 UTC), which is also where
// an ISO-8601 time has the four-digit year PostgreSQL reads.
const MIN_TIME_MS = -62_135_596_800_000;
const MAX_TIME_MS = 253_402_300_799_999;

export function searchQueryOf(request: SearchRequest): Checked<SearchQuery> {
  const query = cutToLength(request.query.replace(CONTROL_CHARACTERS, ' ').trim(), MAX_QUERY_CHARS);
  // The same wording as every other required field of the API.
  const missing = Object.entries({ tenant_id: request.tenantId, query })
    .filter(([, value]) => !value)
    .map(([name]) => name);
  if (missing.length > 0) return { ok: false, error: `${missing.join(' and ')} ${missing.length > 1 ? 'are' : 'is'} required` };
  const idProblems = [idProblem('tenant_id', request.tenantId), idProblem('conversation_id', request.conversationId)].filter(Boolean);
  if (idProblems.length > 0) return { ok: false, error: idProblems.join('; ') };
  const match = request.match ?? 'words';
  if (match === 'substring' && Array.from(query).length < MIN_SUBSTRING_CHARS)
    return { ok: false, error: `query must be at least ${MIN_SUBSTRING_CHARS} characters to match as a substring` };
  const limit = searchLimitOf(request.limit);
  if (!limit.ok) return limit;
  for (const [name, value] of [
    ['from', request.from],
    ['to', request.to],
  ] as const) {
    if (value !== undefined && !(value >= MIN_TIME_MS && value <= MAX_TIME_MS)) return { ok: false, error: `${name} is not a valid time` };
  }
  if (request.from !== undefined && request.to !== undefined && request.from >= request.to)
    return { ok: false, error: 'from must be before to' };
  return {
    ok: true,
    value: {
      tenantId: request.tenantId,
      query,
      match,
      conversationId: request.conversationId || undefined,
      from: request.from === undefined ? undefined : new Date(request.from).toISOString(),
      to: request.to === undefined ? undefined : new Date(request.to).toISOString(),
      limit: limit.value,
    },
  };
}

/** 20 by default, at most 100: a search answers its best hits, it does not page through a tenant. */
export function searchLimitOf(requested: number | undefined): Checked<number> {
  if (requested === undefined || requested === 0) return { ok: true, value: DEFAULT_SEARCH_LIMIT };
  if (!Number.isInteger(requested) || requested < 0) return { ok: false, error: 'limit must be a whole number, 0 or more' };
  return { ok: true, value: Math.min(requested, MAX_SEARCH_LIMIT) };
}

/** At most `max` characters (code points, so a pair of surrogates is never split). */
function cutToLength(text: string, max: number): string {
  if (text.length <= max) return text;
  return Array.from(text).slice(0, max).join('').trimEnd();
}
