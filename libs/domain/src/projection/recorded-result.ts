import type { ToolEvent, ToolResultReceived } from '@toolhistory/contract';
import type { ReadModelState } from './evolve-read-model';
import { invocationKeyString, pairKeyOf } from './read-model-keys';
import type { InvocationRow } from './read-model.types';
import { resultTokens, TokenCounter } from './invocation-tokens';
import { withSeal } from '../encryption/invocation-seals';

/**
 * A result stored before its call is re-redacted once the call names the
 * tool (the stored event changes). A row built from the earlier version must
 * take the stored one, or a rebuild would keep what the tool's rule removes.
 */
export function withRecordedResult(row: InvocationRow, stored: ToolResultReceived, tokens: TokenCounter): InvocationRow {
  return {
    ...row,
    result: stored.result,
    resultRedactions: stored.redaction?.counts ?? {},
    resultBytes: stored.redaction?.originalBytes ?? null,
    resultTokens: resultTokens(tokens, stored.result),
    ...(stored.sealed === undefined ? {} : { payloadSeals: withSeal(row.payloadSeals, 'result', stored.sealed) }),
  };
}

/**
 * Rows that only have a result so far and whose call is in `events`: their
 * result event may have been rewritten since the row was built. Keyed by the
 * result's event id (lower case).
 */
export function resultsAwaitingTheirCall(
  state: ReadModelState,
  events: readonly ToolEvent[],
): Map<string, { key: string; row: InvocationRow; toolName: string }> {
  const waiting = new Map<string, { key: string; row: InvocationRow; toolName: string }>();
  for (const e of events) {
    if (e.type !== 'ToolCallRequested') continue;
    const key = invocationKeyString({ ...e, pairKey: pairKeyOf(e) });
    const row = state.invocations.get(key);
    if (row && row.callEventId === null && row.resultEventId !== null)
      waiting.set(row.resultEventId.toLowerCase(), { key, row, toolName: e.toolName });
  }
  return waiting;
}
