import type { InvocationCursor, InvocationFilter, InvocationRecord } from '../audit/invocation-listing';
import type { UsageQuery, UsageReport } from '../audit/usage-report';

/** Read side for audit and billing: every invocation, including those replay leaves out. */
export interface AuditReader {
  /** Up to `limit` invocations after `after`, in the listing's stable order. */
  listInvocations(filter: InvocationFilter, after: InvocationCursor | null, limit: number): Promise<InvocationRecord[]>;
  usage(query: UsageQuery): Promise<UsageReport>;
}
