/**
 * A call that waits for a person's approval ends its run unanswered; the
 * decision and the result often come in the run that resumed after the
 * person answered. Such an event names the call by its toolCallId, round
 * and sequence, and belongs to the conversation's call that awaits it, not
 * to a new invocation of the later run (docs/adr/022-approvals-side-effects-and-resumed-runs.md).
 */
import type { InvocationEvent, StoredToolEvent } from '@toolhistory/contract';
import { conversationKeyString, invocationKeyString, isInvocationEvent, pairKeyOf } from './read-model-keys';
import type { InvocationRow } from './read-model.types';

/** Which conversation's calls of this id a later run's event may belong to. */
export interface AwaitedCallKey {
  tenantId: string;
  conversationId: string;
  toolCallId: string;
}

const awaitedCallKeyString = (k: AwaitedCallKey): string => `${conversationKeyString(k)}\u0000${k.toolCallId}`;

/**
 * Whether `row`, a call of an earlier run, is what `event` answers: same id
 * (never empty), round and sequence; approval asked for; and not answered
 * in the way the event answers it yet.
 */
export function awaitsLaterRunEvent(row: InvocationRow, event: InvocationEvent): boolean {
  if (event.toolCallId === '' || row.runId === event.runId || row.callEventId === null || row.approvalRequestedAt === null) return false;
  if (row.toolCallId !== event.toolCallId || row.roundIndex !== event.roundIndex || row.sequenceIndex !== event.sequenceIndex) return false;
  if (event.type === 'ToolResultReceived') return row.resultEventId === null;
  if (event.type === 'ToolApprovalDecided') return row.approvalDecidedAt === null;
  return false;
}

/** Events that may answer an earlier run's call: a decision or a result with an id. */
function mayAnswerEarlierRun(event: StoredToolEvent): event is InvocationEvent {
  return (event.type === 'ToolResultReceived' || event.type === 'ToolApprovalDecided') && event.toolCallId !== '';
}

/**
 * The calls to look up before projecting a batch: for each decision or
 * result whose own run has no row of its key (loaded, or made by a call in
 * the batch), the conversation's calls of its id that await approval.
 */
export function awaitedCallLookups(events: readonly StoredToolEvent[], rows: ReadonlyMap<string, InvocationRow>): AwaitedCallKey[] {
  const ownKeys = new Set(rows.keys());
  for (const e of events) if (e.type === 'ToolCallRequested') ownKeys.add(invocationKeyString({ ...e, pairKey: pairKeyOf(e) }));
  const lookups = new Map<string, AwaitedCallKey>();
  for (const e of events) {
    if (!mayAnswerEarlierRun(e) || ownKeys.has(invocationKeyString({ ...e, pairKey: pairKeyOf(e) }))) continue;
    const key = { tenantId: e.tenantId, conversationId: e.conversationId, toolCallId: e.toolCallId };
    lookups.set(awaitedCallKeyString(key), key);
  }
  return [...lookups.values()];
}

/**
 * A batch's invocation rows by key, with the calls of each conversation by
 * id, so an event finds the row it belongs to: its own run's, else the
 * earlier run's call that awaits it.
 */
export class InvocationRowIndex {
  private readonly rows: Map<string, InvocationRow>;
  /** Built on first need: most batches never look beyond an event's own run. */
  private byCallId: Map<string, Set<string>> | undefined;

  constructor(rows: ReadonlyMap<string, InvocationRow>) {
    this.rows = new Map(rows);
  }

  get(key: string): InvocationRow | undefined {
    return this.rows.get(key);
  }

  set(key: string, row: InvocationRow): void {
    this.rows.set(key, row);
    if (this.byCallId !== undefined) this.indexCallId(this.byCallId, key, row);
  }

  /** The key of the row an invocation event belongs to (which may not exist yet). */
  keyFor(event: InvocationEvent): string {
    const own = invocationKeyString({ ...event, pairKey: pairKeyOf(event) });
    if (this.rows.has(own) || !isInvocationEvent(event) || event.toolCallId === '') return own;
    if (event.type !== 'ToolResultReceived' && event.type !== 'ToolApprovalDecided') return own;
    const candidates = this.callIdIndex().get(awaitedCallKeyString(event)) ?? new Set<string>();
    let found: { key: string; row: InvocationRow } | undefined;
    for (const key of candidates) {
      const row = this.rows.get(key)!;
      // Ids may repeat across runs: the most recent call that awaits the event.
      if (awaitsLaterRunEvent(row, event) && (found === undefined || Date.parse(row.requestedAt!) > Date.parse(found.row.requestedAt!)))
        found = { key, row };
    }
    return found?.key ?? own;
  }

  private callIdIndex(): Map<string, Set<string>> {
    if (this.byCallId === undefined) {
      const index = new Map<string, Set<string>>();
      for (const [key, row] of this.rows) this.indexCallId(index, key, row);
      this.byCallId = index;
    }
    return this.byCallId;
  }

  private indexCallId(index: Map<string, Set<string>>, key: string, row: InvocationRow): void {
    if (row.toolCallId === '' || row.approvalRequestedAt === null) return;
    const k = awaitedCallKeyString(row);
    const keys = index.get(k) ?? new Set<string>();
    keys.add(key);
    index.set(k, keys);
  }
}
