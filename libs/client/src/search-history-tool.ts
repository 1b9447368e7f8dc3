import { SearchHitField, type SearchHit } from './generated/toolhistory/v1/toolhistory';
import type { ToolHistoryClient } from './tool-history-client';

/**
 * The one tool an agent gets to search its own tool history: the same name,
 * description, input and answer for every framework adapter (AI SDK,
 * LangChain), which only wrap it in their framework's tool type.
 */
export const SEARCH_HISTORY_TOOL_NAME = 'search_history';

export const SEARCH_HISTORY_TOOL_DESCRIPTION =
  'Search the tool calls made earlier in this conversation: their tool names, arguments and results. ' +
  'match "substring" finds a literal text anywhere, inside words too, in any case (at least 3 characters), newest first; ' +
  'match "words" finds whole words (free text: "a phrase", -excluded, or), best first. ' +
  'Answers the hits: tool, when, where it matched (call and/or result), a snippet with the match in ** **, and the run.';

/** What the model sends. */
export interface SearchHistoryInput {
  query: string;
  match?: 'words' | 'substring';
  /** 1 to 20; default 5. */
  limit?: number;
}

/** At most this many hits per call: the answer goes back into the model's context. */
export const SEARCH_HISTORY_MAX_LIMIT = 20;
const DEFAULT_TOOL_LIMIT = 5;

/** The input as a JSON Schema (draft 7), for frameworks that take one. */
export const SEARCH_HISTORY_INPUT_SCHEMA: {
  type: 'object';
  properties: Record<string, Record<string, unknown>>;
  required: string[];
  additionalProperties: false;
} = {
  type: 'object',
  properties: {
    query: { type: 'string', minLength: 1, description: 'The text to look for' },
    match: {
      type: 'string',
      enum: ['words', 'substring'],
      description: 'substring: a literal text anywhere (at least 3 characters); words: whole words',
    },
    limit: {
      type: 'integer',
      minimum: 1,
      maximum: SEARCH_HISTORY_MAX_LIMIT,
      description: `Most hits to return (default ${DEFAULT_TOOL_LIMIT})`,
    },
  },
  required: ['query'],
  additionalProperties: false,
};

/** One hit as the model reads it: compact, no payloads beyond the snippet. */
export interface SearchHistoryHit {
  tool: string;
  /** When it was called, ISO-8601. */
  at: string | null;
  /** `call`: the tool name or arguments; `result`: the result. */
  matchedIn: ('call' | 'result')[];
  snippet: string;
  runId: string;
  toolCallId: string;
}

/** Where the tool searches: the conversation the agent runs in. */
export interface SearchHistoryTarget {
  client: ToolHistoryClient;
  tenantId: string;
  conversationId: string;
  /** When the model does not say; default 'substring' (what an agent usually means by "find"). */
  defaultMatch?: 'words' | 'substring';
}

/** Runs the search the model asked for, within the bound conversation, and answers the compact hits. */
export async function searchOwnHistory(
  target: SearchHistoryTarget,
  input: SearchHistoryInput,
  signal?: AbortSignal,
): Promise<{ hits: SearchHistoryHit[] }> {
  const limit = Math.min(Math.max(1, Math.trunc(input.limit ?? DEFAULT_TOOL_LIMIT)), SEARCH_HISTORY_MAX_LIMIT);
  const response = await target.client.searchToolHistory({
    tenantId: target.tenantId,
    conversationId: target.conversationId,
    query: input.query,
    match: input.match ?? target.defaultMatch ?? 'substring',
    limit,
    signal,
  });
  return { hits: response.hits.map(compactHit) };
}

function compactHit(hit: SearchHit): SearchHistoryHit {
  const matchedIn = new Set<'call' | 'result'>();
  for (const field of hit.matchedIn) {
    switch (field) {
      case SearchHitField.SEARCH_HIT_FIELD_TOOL_NAME:
      case SearchHitField.SEARCH_HIT_FIELD_ARGUMENTS:
        matchedIn.add('call');
        break;
      case SearchHitField.SEARCH_HIT_FIELD_RESULT:
        matchedIn.add('result');
        break;
      case SearchHitField.SEARCH_HIT_FIELD_UNSPECIFIED:
      case SearchHitField.UNRECOGNIZED:
        break;
    }
  }
  const invocation = hit.invocation;
  return {
    tool: invocation?.toolName ?? '',
    at: (invocation?.requestedAt ?? invocation?.completedAt)?.toISOString() ?? null,
    matchedIn: [...matchedIn],
    snippet: hit.snippet,
    runId: invocation?.runId ?? '',
    toolCallId: invocation?.toolCallId ?? '',
  };
}
