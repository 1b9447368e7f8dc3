import type { InvocationCursor, InvocationFilter, InvocationRecord } from '../audit/invocation-listing';
import type { UsageQuery, UsageReport } from '../audit/usage-report';
import type { SearchHit, SearchQuery } from '../audit/search-request';
import type { StoredRun } from '../audit/conversation-timeline';

/** Read side for audit and billing: every invocation, including those replay leaves out. */
/** A `signal` that aborts (the caller's deadline passed) cancels the query in the store. */
export interface AuditReader {
  /** Up to `limit` invocations after `after`, in the listing's stable order. */
  listInvocations(
    filter: InvocationFilter,
    after: InvocationCursor | null,
    limit: number,
    signal?: AbortSignal,
  ): Promise<InvocationRecord[]>;
  usage(query: UsageQuery, signal?: AbortSignal): Promise<UsageReport>;
  /**
   * Up to `query.limit` invocations matching the text, best first (equal
   * scores newest first, then by key, so the order is stable). Only what the
   * stored row holds can match or appear in a snippet.
   */
  searchInvocations(query: SearchQuery, signal?: AbortSignal): Promise<SearchHit[]>;
  /** The runs of one conversation as stored now, oldest first. */
  conversationRuns(tenantId: string, conversationId: string, signal?: AbortSignal): Promise<StoredRun[]>;
}
