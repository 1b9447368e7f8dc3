/**
 * The Kafka contract as plain data. Field names are the wire names; the
 * validated classes in tool-event.classes.ts implement these shapes.
 */
export const TOOL_EVENT_TYPES = ['ToolCallRequested', 'ToolResultReceived', 'RunCompleted', 'RunFailed'] as const;
export type ToolEventType = (typeof TOOL_EVENT_TYPES)[number];

/** Versions this build can read. A new version adds an upcaster, never edits an old one. */
export const SUPPORTED_SCHEMA_VERSIONS = [1] as const;
export const CURRENT_SCHEMA_VERSION = 1;

export const MAX_ID_LENGTH = 256;

export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };
export type JsonObject = { [key: string]: JsonValue };

/**
 * What the recorder's redaction did to an event, stored with it. Never
 * accepted from producers (unknown fields are dropped on parsing).
 */
export interface RedactionNote {
  persist: 'full' | 'metadata' | 'none';
  /** Markers applied: per detector kind, per masked JSON path, and "truncated". Values are never kept. */
  counts: Record<string, number>;
  /** Size in bytes of the arguments or result as received (absent when persist is "none"). */
  originalBytes?: number;
}

export interface EventEnvelope {
  eventId: string;
  type: ToolEventType;
  schemaVersion: number;
  tenantId: string;
  conversationId: string;
  channel: string;
  runId: string;
  occurredAt: string;
  /** Present on recorded events only. */
  redaction?: RedactionNote;
}

export interface ToolCallRequested extends EventEnvelope {
  type: 'ToolCallRequested';
  roundIndex: number;
  sequenceIndex: number;
  toolCallId: string;
  toolName: string;
  arguments: JsonObject;
}

export interface ToolResultReceived extends EventEnvelope {
  type: 'ToolResultReceived';
  toolCallId: string;
  roundIndex: number;
  sequenceIndex: number;
  result: JsonValue;
  isError: boolean;
}

export interface TokenUsage {
  inputTokens: number;
  outputTokens: number;
}

export interface RunCompleted extends EventEnvelope {
  type: 'RunCompleted';
  assistantMessageId: string;
  finishReason: string;
  usage?: TokenUsage;
}

export interface RunFailureDetail {
  code: string;
  message: string;
}

export interface RunFailed extends EventEnvelope {
  type: 'RunFailed';
  error: RunFailureDetail;
}

export type ToolEvent = ToolCallRequested | ToolResultReceived | RunCompleted | RunFailed;
