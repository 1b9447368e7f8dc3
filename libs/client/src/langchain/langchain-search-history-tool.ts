import { tool } from '@langchain/core/tools';
import {
  SEARCH_HISTORY_INPUT_SCHEMA,
  SEARCH_HISTORY_TOOL_DESCRIPTION,
  SEARCH_HISTORY_TOOL_NAME,
  type SearchHistoryInput,
  type SearchHistoryTarget,
  searchOwnHistory,
} from '../search-history-tool';

/**
 * A LangChain tool named `search_history` with which the model searches the
 * tool calls made earlier in the conversation it runs in (SearchToolHistory,
 * limited to that conversation, so a token with history:read is enough).
 * Its answer is the hits as JSON text, the content of the ToolMessage.
 */
export function searchHistoryTool(target: SearchHistoryTarget) {
  return tool(async (input: SearchHistoryInput, config) => JSON.stringify(await searchOwnHistory(target, input, config?.signal)), {
    name: SEARCH_HISTORY_TOOL_NAME,
    description: SEARCH_HISTORY_TOOL_DESCRIPTION,
    schema: SEARCH_HISTORY_INPUT_SCHEMA,
  });
}
