// The OpenAI Agents SDK for JavaScript (`@openai/agents`, a peer dependency). Its types only are imported: the
// helpers read what the host's own copy of the SDK returns, and take the host's run() as a function.
export { AgentsRunRecorder, recordAgentsRun, recordedRun } from './agents-run-recorder';
export type { AgentsRunRecorderOptions } from './agents-run-recorder';
export {
  agentsRunRecord,
  DEFAULT_TOOL_ERROR_TEXT,
  isSdkToolError,
  markToolError,
  responseReasoningOf,
  resumePointOf,
  runViewOfState,
  toolErrorFunction,
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
  ToolErrorDetails,
  ToolErrorTest,
} from './agents-run-mapper';
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
export { MESSAGE_ID_KEY, ToolHistorySession } from './tool-history-session';
export type { SessionToolErrorTest, ToolHistorySessionOptions } from './tool-history-session';
