import type { InvocationEvent, StoredToolEvent, ToolCallRequested, ToolResultReceived } from '@toolhistory/contract';
import type { EventKeys } from '../ports/event-store.port';

export interface ConversationKey {
  tenantId: string;
  conversationId: string;
}
export interface RunKey extends ConversationKey {
  runId: string;
}
export interface InvocationKey extends RunKey {
  pairKey: string;
}
export interface ResponseKey extends RunKey {
  roundIndex: number;
}

/**
 * A call and its result meet on the LLM's tool call id; when the id is empty
 * they meet on their position in the run (round, sequence).
 */
export function pairKeyOf(event: Pick<ToolCallRequested | ToolResultReceived, 'toolCallId' | 'roundIndex' | 'sequenceIndex'>): string {
  return event.toolCallId !== '' ? `id:${event.toolCallId}` : `pos:${event.roundIndex}:${event.sequenceIndex}`;
}

// \u0000 cannot occur in the ids (PostgreSQL text rejects it), so it is a safe separator.
const SEP = '\u0000';
export const conversationKeyString = (k: ConversationKey): string => `${k.tenantId}${SEP}${k.conversationId}`;
export const runKeyString = (k: RunKey): string => `${conversationKeyString(k)}${SEP}${k.runId}`;
export const invocationKeyString = (k: InvocationKey): string => `${runKeyString(k)}${SEP}${k.pairKey}`;
export const responseKeyString = (k: ResponseKey): string => `${runKeyString(k)}${SEP}${k.roundIndex}`;

/** The events about one invocation (a call, its approval, its result), keyed by its pair key. */
export function isInvocationEvent(event: StoredToolEvent): event is InvocationEvent {
  return (
    event.type === 'ToolCallRequested' ||
    event.type === 'ToolResultReceived' ||
    event.type === 'ToolApprovalRequested' ||
    event.type === 'ToolApprovalDecided'
  );
}

/** A call or its result: the events that carry a payload. */
export function isPayloadEvent(event: StoredToolEvent): event is ToolCallRequested | ToolResultReceived {
  return event.type === 'ToolCallRequested' || event.type === 'ToolResultReceived';
}

/** The read-model rows a batch of events can touch, so an adapter loads exactly those. */
export function keysTouchedBy(events: readonly StoredToolEvent[]): {
  conversations: ConversationKey[];
  runs: RunKey[];
  invocations: InvocationKey[];
  responses: ResponseKey[];
} {
  const conversations = new Map<string, ConversationKey>();
  const runs = new Map<string, RunKey>();
  const invocations = new Map<string, InvocationKey>();
  const responses = new Map<string, ResponseKey>();
  for (const e of events) {
    const conversation = { tenantId: e.tenantId, conversationId: e.conversationId };
    conversations.set(conversationKeyString(conversation), conversation);
    const run = { ...conversation, runId: e.runId };
    runs.set(runKeyString(run), run);
    if (isInvocationEvent(e)) {
      const invocation = { ...run, pairKey: pairKeyOf(e) };
      invocations.set(invocationKeyString(invocation), invocation);
    }
    if (e.type === 'ModelResponseReceived') {
      const response = { ...run, roundIndex: e.roundIndex };
      responses.set(responseKeyString(response), response);
    }
  }
  return {
    conversations: [...conversations.values()],
    runs: [...runs.values()],
    invocations: [...invocations.values()],
    responses: [...responses.values()],
  };
}

const INVOCATION_EVENT_TYPES: ReadonlySet<string> = new Set<InvocationEvent['type']>([
  'ToolCallRequested',
  'ToolResultReceived',
  'ToolApprovalRequested',
  'ToolApprovalDecided',
]);

/**
 * The invocations (and their conversations) that events touch, from their
 * keys alone (as `keysTouchedBy` finds them): what search documents are
 * rewritten for.
 */
export function invocationKeysTouchedBy(events: readonly EventKeys[]): { conversations: ConversationKey[]; invocations: InvocationKey[] } {
  const conversations = new Map<string, ConversationKey>();
  const invocations = new Map<string, InvocationKey>();
  for (const e of events) {
    if (!INVOCATION_EVENT_TYPES.has(e.type)) continue;
    const conversation = { tenantId: e.tenantId, conversationId: e.conversationId };
    conversations.set(conversationKeyString(conversation), conversation);
    const invocation = {
      ...conversation,
      runId: e.runId,
      pairKey:
        e.pairKey ?? pairKeyOf({ toolCallId: e.toolCallId ?? '', roundIndex: e.roundIndex ?? 0, sequenceIndex: e.sequenceIndex ?? 0 }),
    };
    invocations.set(invocationKeyString(invocation), invocation);
  }
  return { conversations: [...conversations.values()], invocations: [...invocations.values()] };
}
