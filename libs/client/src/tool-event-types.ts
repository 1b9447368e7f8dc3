// The event contract's shapes, from the contract's own type file (bundled into the package when it is built).
export type {
  JsonObject,
  JsonValue,
  RunFailureDetail,
  TokenUsage,
  ToolCallRequested,
  ToolEvent,
  ToolEventType,
  ToolResultReceived,
  ToolApprovalRequested,
  ToolApprovalDecided,
  ModelResponseReceived,
  RunCompleted,
  RunFailed,
} from '../../contract/src/tool-event.types';
