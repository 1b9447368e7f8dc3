/**
 * Ids as the model sees them again. An empty id (some providers and local
 * models give none) becomes one derived from where the call sits, so the
 * assistant message and the tool message agree and every replay yields the
 * same bytes (provider prompt caches keep hitting).
 */

const ANTHROPIC_ID = /^[a-zA-Z0-9_-]+$/;

/** cyrb53-style 53-bit string hash, twice with different seeds: 26 hex digits, pure and stable. */
function stableHash(text: string): string {
  const half = (seed: number) => {
    let h1 = 0xdeadbeef ^ seed;
    let h2 = 0x41c6ce57 ^ seed;
    for (let i = 0; i < text.length; i += 1) {
      const ch = text.charCodeAt(i);
      h1 = Math.imul(h1 ^ ch, 2654435761);
      h2 = Math.imul(h2 ^ ch, 1597334677);
    }
    h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507) ^ Math.imul(h2 ^ (h2 >>> 13), 3266489909);
    h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507) ^ Math.imul(h1 ^ (h1 >>> 13), 3266489909);
    return (4294967296 * (2097151 & h2) + (h1 >>> 0)).toString(16).padStart(14, '0').slice(-13);
  };
  return half(1) + half(2);
}

export interface CallPlace {
  tenantId: string;
  conversationId: string;
  runId: string;
  roundIndex: number;
  sequenceIndex: number;
}

export function derivedToolCallId(place: CallPlace): string {
  return `call_${stableHash(`${place.tenantId}\u0000${place.conversationId}\u0000${place.runId}\u0000${place.roundIndex}\u0000${place.sequenceIndex}`)}`;
}

/** The id to replay: the recorded one, else the derived one. */
export function replayedToolCallId(recorded: string, place: CallPlace): string {
  return recorded !== '' ? recorded : derivedToolCallId(place);
}

/** Anthropic accepts only [a-zA-Z0-9_-] in tool_use ids; others map to a stable, valid id. */
export function anthropicToolUseId(id: string): string {
  return ANTHROPIC_ID.test(id) ? id : `toolu_${stableHash(id)}`;
}

const BEDROCK_ID = /^[a-zA-Z0-9_-]{1,64}$/;

/** Bedrock accepts [a-zA-Z0-9_-], at most 64 characters, in toolUseIds; others map to a stable, valid id. */
export function bedrockToolUseId(id: string): string {
  return BEDROCK_ID.test(id) ? id : `tooluse_${stableHash(id)}`;
}
