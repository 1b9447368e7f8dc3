// A plain file of the contract with no imports of its own: bundled into the package when it is built.
import { kafkaConsistencyToken, laterConsistencyToken } from '../../contract/src/consistency-token';

export { kafkaConsistencyToken } from '../../contract/src/consistency-token';

/** Conversations whose last token a process keeps; the oldest is forgotten first (its reads then wait for nothing). */
const MAX_CONVERSATIONS = 10_000;

/**
 * The last consistency token published for each conversation in this
 * process, read by the client's own reads of it (read-your-writes). Kept on
 * globalThis: a process that loads the package twice (its CommonJS and its
 * ES module build) still has one.
 */
const TOKENS = Symbol.for('@toolhistory/client.consistencyTokens');
type WithTokens = typeof globalThis & { [TOKENS]?: Map<string, string> };

function tokens(): Map<string, string> {
  const shared = globalThis as WithTokens;
  return (shared[TOKENS] ??= new Map());
}

const keyOf = (tenantId: string, conversationId: string) => JSON.stringify([tenantId, conversationId]);

/** Remembers what was published for the conversation; a token older than the one kept (same partition, lower offset) changes nothing. */
export function rememberConsistencyToken(conversation: { tenantId: string; conversationId: string }, token: string): void {
  const map = tokens();
  const key = keyOf(conversation.tenantId, conversation.conversationId);
  const later = laterConsistencyToken(map.get(key), token);
  map.delete(key);
  map.set(key, later);
  if (map.size > MAX_CONVERSATIONS) map.delete(map.keys().next().value!);
}

/**
 * The last consistency token this process published for the conversation,
 * if any: what its reads wait for. A host whose reads run in another
 * process carries it there (e.g. in its message row) and passes it as
 * `consistencyToken`.
 */
export function lastConsistencyToken(conversation: { tenantId: string; conversationId: string }): string | undefined {
  return tokens().get(keyOf(conversation.tenantId, conversation.conversationId));
}

/** The token a read sends: the caller's, '' for none, else the last one this process published for the conversation. */
export function tokenForRead(given: string | undefined, conversation: { tenantId: string; conversationId?: string }): string {
  if (given !== undefined) return given;
  if (!conversation.conversationId) return '';
  return lastConsistencyToken({ tenantId: conversation.tenantId, conversationId: conversation.conversationId }) ?? '';
}

/** A token naming a Kafka acknowledgement's message. */
export const tokenOfAck = (topic: string, partition: number, offset: string): string => kafkaConsistencyToken(topic, partition, offset);
