// @toolhistory/client/langchain: record a LangChain.js / LangGraph.js agent's tool calls, and give replayed history back as LangChain messages.
export {
  ToolHistoryCallbackHandler,
  type ToolHistoryCallbackHandlerOptions,
  type ToolHistoryRunTarget,
} from './tool-history-callback-handler';
export { toLangChainMessages, spliceToolHistory, type LangChainHistoryInput, type ReplayedTurns } from './langchain-message-converter';
export { ToolHistoryPublishError, type PublishFailure } from './ordered-publish-queue';
export { searchHistoryTool } from './langchain-search-history-tool';
export {
  GEMINI_FUNCTION_CALL_SIGNATURES,
  GEMINI_PLACEHOLDER_SIGNATURE,
  messageReasoningOf,
  OPENAI_FUNCTION_CALL_IDS,
  reasoningMessageFields,
} from './langchain-reasoning';
