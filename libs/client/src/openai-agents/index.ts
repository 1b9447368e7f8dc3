// The OpenAI Agents SDK for JavaScript (`@openai/agents`, a peer dependency). Its types only are imported: the
// helpers read what the host's own copy of the SDK returns, and take the host's run() as a function.
export { AgentsRunRecorder, recordAgentsRun, recordedRun } from './agents-run-recorder';
export type { AgentsRunRecorderOptions } from './agents-run-recorder';
export {
  agentsRunRecord,
  isSdkToolError,
  responseReasoningOf,
  resumePointOf,
  runViewOfState,
  toolResultOf,
  usageOf,
} from './agents-run-mapper';
export type {
  AgentsRecordedCall,
  AgentsRecordedDecision,
  AgentsRecordedResult,
  AgentsRecordedRound,
  AgentsRunRecord,
  AgentsRunRecordOptions,
  AgentsRunState,
  AgentsRunView,
  ResumePoint,
  ToolErrorTest,
} from './agents-run-mapper';
export { DEFAULT_TOOL_ERROR_TEXT, markToolError, toolErrorFunction } from './agents-tool-errors';
export type { ToolErrorDetails } from './agents-tool-errors';
export { historyInput, toAgentInputItems } from './agents-history-input';
export type {
  OpenAiResponsesFunctionCall,
  OpenAiResponsesFunctionCallOutput,
  OpenAiResponsesOutputMessage,
  OpenAiResponsesReasoningItem,
  ReplayedAgentItem,
  ResponsesReplayItem,
  ResponsesReplayTurn,
} from './agents-history-input';
export { ToolHistorySession } from './tool-history-session';
export { MESSAGE_ID_KEY } from './session-items';
export type { SessionToolErrorTest, ToolHistorySessionOptions } from './tool-history-session';
