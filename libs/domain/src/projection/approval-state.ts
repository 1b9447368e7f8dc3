import { millisOf as at } from './row-time';
import type { InvocationRow } from './read-model.types';

/** A person's answer to a call that needed approval. */
export type ApprovalState = 'none' | 'pending' | 'approved' | 'denied';

/**
 * The answer as it stood at `asOf` (default: as recorded now): a decision
 * counts from its time, a request from its own. A decision recorded without
 * a request still counts.
 */
export function approvalAsOf(
  row: Pick<InvocationRow, 'approvalRequestedAt' | 'approvalDecidedAt' | 'approved'>,
  asOf = Number.POSITIVE_INFINITY,
): ApprovalState {
  if (row.approvalDecidedAt !== null && at(row.approvalDecidedAt) <= asOf) return row.approved === true ? 'approved' : 'denied';
  if (row.approvalRequestedAt !== null && at(row.approvalRequestedAt) <= asOf) return 'pending';
  return 'none';
}
