import type { StoredToolEvent } from '@toolhistory/contract';
import { conversationKeyString, invocationKeyString, isInvocationEvent, pairKeyOf } from '../projection/read-model-keys';
import type { InvocationRow } from '../projection/read-model.types';

type CallPosition = { tenantId: string; conversationId: string; toolCallId: string; roundIndex: number; sequenceIndex: number };

/**
 * A call that awaits approval may get its result in a later run of the
 * conversation (cross-run-pairing.ts): that result is named by the call's
 * id and place, not by its run. The prefix keeps these apart from
 * invocation keys, which start with a tenant id (never empty).
 */
const awaitedCallKey = (p: CallPosition): string =>
  `\u0000awaited\u0000${conversationKeyString(p)}\u0000${p.toolCallId}\u0000${p.roundIndex}\u0000${p.sequenceIndex}`;

/**
 * The tool of every invocation that recorded rows or calls name, by
 * invocation key: a result is redacted by its call's tool rule, and the
 * call may be in the same batch or recorded before, in its own run or,
 * for a call that awaits approval, in an earlier one.
 */
export function toolNamesByInvocation(calls: Iterable<StoredToolEvent>, rows: Iterable<InvocationRow> = []): Map<string, string> {
  const names = new Map<string, string>();
  const events = [...calls];
  const awaiting = new Set<string>();
  for (const e of events) if (e.type === 'ToolApprovalRequested') awaiting.add(awaitedCallKey(e));
  for (const row of rows) {
    if (row.toolName === null) continue;
    names.set(invocationKeyString(row), row.toolName);
    if (row.approvalRequestedAt !== null && row.toolCallId !== '') names.set(awaitedCallKey(row), row.toolName);
  }
  for (const e of events) {
    if (e.type !== 'ToolCallRequested') continue;
    names.set(invocationKeyString({ ...e, pairKey: pairKeyOf(e) }), e.toolName);
    if (awaiting.has(awaitedCallKey(e))) names.set(awaitedCallKey(e), e.toolName);
  }
  return names;
}

/** The tool an invocation event belongs to, when known; null for run events and results whose call is unknown. */
export function toolNameFor(names: ReadonlyMap<string, string>, event: StoredToolEvent): string | null {
  if (!isInvocationEvent(event)) return null;
  const own = names.get(invocationKeyString({ ...event, pairKey: pairKeyOf(event) }));
  if (own !== undefined || event.toolCallId === '') return own ?? null;
  return names.get(awaitedCallKey(event)) ?? null;
}
