export * from './tool-event-publisher';
export * from './tool-history-client';
export * from './tool-history-errors';
export * from './history-formats';
export { deriveEventId, nameBasedUuid, TOOL_EVENT_ID_NAMESPACE } from './event-ids';
export type * from './tool-event-types';
export {
  type Invocation,
  type Omission,
  OmissionReason,
  type PendingApproval,
  ApprovalStatus,
  type RecordedEvent,
  type Round,
  RunStatus,
  type SearchHit,
  type GetUsageResponse,
  type UsageRow,
  type ToolCall,
  type Turn,
  InvocationStatus,
  PersistMode,
} from './generated/toolhistory/v1/toolhistory';
export * from './splice-history';
