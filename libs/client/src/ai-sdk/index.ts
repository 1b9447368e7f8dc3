export {
  type GenerateTextOptions,
  recordedGenerateText,
  type RecordedGenerateTextResult,
  recordedStreamText,
  type RecordedStreamTextResult,
  type StreamTextOptions,
} from './ai-sdk-call-wrappers';
export {
  type AiSdkRunTarget,
  type ApprovalRequestCall,
  type FinishedCall,
  lastUserMessageId,
  type RecordingOptions,
  type ToolHistoryCallbacks,
  toolHistoryCallbacks,
} from './ai-sdk-run-recorder';
export { runFailure, runFinishReason, type StepInvocation, stepInvocations, stepReasoning, stepUsage } from './ai-sdk-step-mapper';
export {
  type ApprovalAnswer,
  approvalAnswers,
  type CallPosition,
  type KnownPendingApproval,
  pendingApprovalMessages,
  replayedApprovalId,
  toolApprovalResponse,
} from './ai-sdk-approvals';
export { searchHistoryTool } from './ai-sdk-search-history-tool';
