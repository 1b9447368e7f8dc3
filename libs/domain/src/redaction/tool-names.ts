import type { StoredToolEvent } from '@toolhistory/contract';
import { invocationKeyString, isInvocationEvent, pairKeyOf } from '../projection/read-model-keys';
import type { InvocationRow } from '../projection/read-model.types';

/**
 * The tool of every invocation that recorded rows or calls name, by
 * invocation key: a result is redacted by its call's tool rule, and the
 * call may be in the same batch or recorded before.
 */
export function toolNamesByInvocation(calls: Iterable<StoredToolEvent>, rows: Iterable<InvocationRow> = []): Map<string, string> {
  const names = new Map<string, string>();
  for (const row of rows) if (row.toolName !== null) names.set(invocationKeyString(row), row.toolName);
  for (const e of calls) if (e.type === 'ToolCallRequested') names.set(invocationKeyString({ ...e, pairKey: pairKeyOf(e) }), e.toolName);
  return names;
}

/** The tool an invocation event belongs to, when known; null for run events and results whose call is unknown. */
export function toolNameFor(names: ReadonlyMap<string, string>, event: StoredToolEvent): string | null {
  if (!isInvocationEvent(event)) return null;
  return names.get(invocationKeyString({ ...event, pairKey: pairKeyOf(event) })) ?? null;
}
