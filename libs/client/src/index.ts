export * from './tool-event-publisher';
export { citedSourcesFrom } from './cited-sources';
export * from './tool-history-client';
export * from './tool-history-errors';
export { RETRY_PUSHBACK_KEY } from './pushback';
export * from './history-formats';
export { deriveEventId, nameBasedUuid, TOOL_EVENT_ID_NAMESPACE } from './event-ids';
export { type MaxResultChars, TRUNCATED_ARGUMENTS_KEY } from './payload-truncation';
export { type PayloadKind, type PersistAnswer, type PersistContext, type PersistHook, type PersistOption } from './persist-hook';
// The contract's own marker and size limit, so a host can tell a cut payload the way the service does.
export { TRUNCATION_TAIL, truncationMarker } from '../../contract/src/truncation-marker';
export { DEFAULT_MAX_EVENT_BYTES } from '../../contract/src/tool-event.types';
export type * from './tool-event-types';
export {
  ApprovalStatus,
  type Invocation,
  type PendingApproval,
  type Omission,
  OmissionReason,
  type RecordedEvent,
  type ConversationChange,
  type ConversationSnapshot,
  type WatchedInvocation,
  type InvocationChanged,
  type RunEnded,
  type Round,
  ReasoningOmission,
  RunStatus,
  type SearchHit,
  SearchHitField,
  type GetUsageResponse,
  type UsageRow,
  type ToolCall,
  type Turn,
  InvocationStatus,
  PersistMode,
} from './generated/toolhistory/v1/toolhistory';
export * from './splice-history';
export { kafkaConsistencyToken, lastConsistencyToken } from './consistency-tokens';
export type { RunTarget } from './run-target';
export {
  SEARCH_HISTORY_INPUT_SCHEMA,
  SEARCH_HISTORY_MAX_LIMIT,
  SEARCH_HISTORY_TOOL_DESCRIPTION,
  SEARCH_HISTORY_TOOL_NAME,
  type SearchHistoryHit,
  type SearchHistoryInput,
  type SearchHistoryTarget,
  searchOwnHistory,
} from './search-history-tool';
export type { ResponseReasoning, RecordedResponse } from './recording/recorded-run';
