import { createHash } from 'node:crypto';

/**
 * The namespace of toolhistory's name-based event ids (a fixed random UUID).
 * Changing it would give every retried step a new id, so it never changes.
 */
export const TOOL_EVENT_ID_NAMESPACE = '5b0f3c1e-9a6d-4c3b-8f2e-7d41a9e6c2b0';

/**
 * A name-based UUID (version 5, RFC 9562 section 5.5): SHA-1 of the
 * namespace's 16 bytes and the name, with the version and variant bits set.
 * node:crypto does the hashing; the uuid package's CommonJS builds are no
 * longer published, and this is the whole of what it would do here.
 */
export function nameBasedUuid(name: string, namespace = TOOL_EVENT_ID_NAMESPACE): string {
  const namespaceBytes = Buffer.from(namespace.replace(/-/g, ''), 'hex');
  if (namespaceBytes.length !== 16) throw new TypeError(`namespace: ${JSON.stringify(namespace)} is not a UUID`);
  const hash = createHash('sha1').update(namespaceBytes).update(name, 'utf8').digest();
  hash[6] = (hash[6] & 0x0f) | 0x50;
  hash[8] = (hash[8] & 0x3f) | 0x80;
  const hex = hash.subarray(0, 16).toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/**
 * What makes one event of a run the same event when a worker publishes it
 * again. The events about one invocation (its call, its result, the request
 * for approval and the answer) are keyed by the call's round, sequence and
 * toolCallId; the model's response in a round by its round; a run's end by
 * its type alone.
 */
export type EventIdentity =
  | {
      type: 'ToolCallRequested' | 'ToolResultReceived' | 'ToolApprovalRequested' | 'ToolApprovalDecided';
      roundIndex: number;
      sequenceIndex: number;
      toolCallId: string;
    }
  | { type: 'ModelResponseReceived'; roundIndex: number }
  | { type: 'RunCompleted' | 'RunFailed' };

export interface RunIdentity {
  tenantId: string;
  conversationId: string;
  runId: string;
}

/**
 * The event id a step gets when the worker names none: the same run and
 * the same step give the same id, so a retried or re-run step is recorded
 * once. A JSON array as the name keeps the parts apart whatever they hold.
 */
export function deriveEventId(run: RunIdentity, identity: EventIdentity): string {
  const step =
    identity.type === 'ModelResponseReceived'
      ? [identity.type, identity.roundIndex]
      : 'roundIndex' in identity
        ? [identity.type, identity.roundIndex, identity.sequenceIndex, identity.toolCallId]
        : [identity.type];
  return nameBasedUuid(JSON.stringify(['toolhistory/v1', run.tenantId, run.conversationId, run.runId, ...step]));
}
