import { jsonSchema, type Tool, tool } from 'ai';
import {
  SEARCH_HISTORY_INPUT_SCHEMA,
  SEARCH_HISTORY_TOOL_DESCRIPTION,
  type SearchHistoryHit,
  type SearchHistoryInput,
  type SearchHistoryTarget,
  searchOwnHistory,
} from '../search-history-tool';

/**
 * An AI SDK tool with which the model searches the tool calls made earlier
 * in the conversation it runs in (SearchToolHistory, limited to that
 * conversation, so a token with history:read is enough). Give it to the
 * model under SEARCH_HISTORY_TOOL_NAME: `tools: { search_history: searchHistoryTool({ ... }) }`.
 * Typed as the SDK's `Tool` so the declaration names no type that only
 * newer SDK versions have (the package supports every `ai` of its peer range).
 */
export function searchHistoryTool(target: SearchHistoryTarget): Tool<SearchHistoryInput, { hits: SearchHistoryHit[] }> {
  return tool({
    description: SEARCH_HISTORY_TOOL_DESCRIPTION,
    inputSchema: jsonSchema<SearchHistoryInput>(SEARCH_HISTORY_INPUT_SCHEMA),
    execute: (input, { abortSignal }) => searchOwnHistory(target, input, abortSignal),
  });
}
