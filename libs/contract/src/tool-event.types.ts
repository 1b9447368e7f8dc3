/**
 * The Kafka contract as plain data. Field names are the wire names; the
 * validated classes in tool-event.classes.ts implement these shapes.
 */
export const TOOL_EVENT_TYPES = [
  'ToolCallRequested',
  'ToolResultReceived',
  'ToolApprovalRequested',
  'ToolApprovalDecided',
  'RunCompleted',
  'RunFailed',
  'ModelResponseReceived',
] as const;
export type ToolEventType = (typeof TOOL_EVENT_TYPES)[number];

/**
 * Versions this build accepts and can read. Events are validated and stored
 * in the version they were published in; readers bring older versions to
 * the current shape with the upcasters (upcast-tool-event.ts). A new
 * version adds an upcaster, never edits an old one.
 */
export const SUPPORTED_SCHEMA_VERSIONS = [1, 2] as const;
export const CURRENT_SCHEMA_VERSION = 2;

/** The largest message value the recorder accepts (MAX_EVENT_BYTES may lower it). */
export const DEFAULT_MAX_EVENT_BYTES = 1024 * 1024;
export const MAX_ID_LENGTH = 256;
/** Service calls a RunCompleted may report usage for (schemaVersion 2). */
export const MAX_USAGE_ENTRIES = 1_000;
/** Source numbers a RunCompleted may say its answer cites (schemaVersion 2). */
export const MAX_CITED_SOURCES = 10_000;
/** Indices and token counts fit the read model's integer columns. */
export const MAX_INDEX = 2_147_483_647;
/** How deep `arguments` and `result` may nest: deeper JSON is no tool payload, and walking it would exhaust the stack. */
export const MAX_JSON_DEPTH = 64;
/** Reasoning items one ModelResponseReceived may carry, and calls its signature and item-id maps may name. */
export const MAX_REASONING_ITEMS = 1_000;
export const MAX_CALL_ENTRIES = 1_000;

export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };
export type JsonObject = { [key: string]: JsonValue };

/** What is kept of a payload: all of it (maybe redacted), its size only, or nothing. */
export type PersistChoice = 'full' | 'metadata' | 'none';
export const PERSIST_CHOICES: readonly PersistChoice[] = ['full', 'metadata', 'none'];

/**
 * What a producer's persist hook chose for a call's arguments or a result,
 * sent with `producerRedacted: true`; any other member is dropped on parsing.
 */
export interface ProducerRedaction {
  persist: PersistChoice;
}

/**
 * What the recorder's redaction did to an event, stored with it. Never
 * accepted from producers (unknown fields are dropped on parsing): a
 * producer says only what it kept (ProducerRedaction), and the stored
 * `persist` is the stricter of the producer's and the policy's.
 */
export interface RedactionNote {
  persist: PersistChoice;
  /** Markers applied: per detector kind, per masked JSON path, and "truncated". Values are never kept. */
  counts: Record<string, number>;
  /** Size in bytes of the arguments or result as received (absent when persist is "none"). */
  originalBytes?: number;
}

/**
 * Where a forked conversation's copy of an event came from: stored with the
 * copy, never accepted from producers (like `redaction`).
 */
export interface ForkedFrom {
  /** The conversation the event was copied from. */
  conversationId: string;
  /** The copied event's global position there. */
  position: string;
  /** Every conversation the payload came through, nearest first: erasing any of them removes this copy. */
  via: string[];
}

/**
 * A payload sealed at rest (docs/adr/033): the event's payload members
 * (`arguments`, `result`, `reason`), as one JSON object, encrypted with
 * AES-256-GCM under a data key of the conversation. Stored with the event
 * in place of those members, never accepted from producers.
 */
export interface SealedPayload {
  /** The data key's id in the key store. */
  key: string;
  /** When the data key is destroyed (the payload's retention ends); null: when the conversation is erased. */
  expiresAt: string | null;
  /** Base64 of nonce, ciphertext and tag. Absent where a row only notes that its payload rests sealed in its event. */
  data?: string;
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
  /** The host's id of the message that started the run, when the producer knows it: replay places the run's tools after it. */
  userMessageId?: string;
  /**
   * On recorded events, what the recorder did. A published call or result
   * with `producerRedacted` carries the producer's choice instead
   * (ProducerRedaction: `persist` alone) until the recorder replaces it.
   */
  redaction?: RedactionNote;
  /** On a forked conversation's copy of an event: where it came from (ForkConversation). */
  forkedFrom?: ForkedFrom;
  /**
   * Stored events with encryption at rest: the payload members, sealed
   * (absent from the event as stored). Events read back have their members
   * again and keep this note of where they rested.
   */
  sealed?: SealedPayload;
  /** On an event read back: its payload's data key is gone (its retention ended), so the payload members hold nothing. */
  payloadExpired?: true;
}

export interface ToolCallRequested extends EventEnvelope {
  type: 'ToolCallRequested';
  roundIndex: number;
  sequenceIndex: number;
  toolCallId: string;
  toolName: string;
  arguments: JsonObject;
  /** Set when the producer cut `arguments` to fit the event limit, or withheld them (persist metadata): their size in bytes (UTF-8 JSON) before the cut. */
  originalBytes?: number;
  /** The producer's persist hook ran on `arguments` (what it kept: `redaction.persist`); kept on the stored event. */
  producerRedacted?: true;
}

export interface ToolResultReceived extends EventEnvelope {
  type: 'ToolResultReceived';
  toolCallId: string;
  roundIndex: number;
  sequenceIndex: number;
  /** null only when the producer or the policy kept no payload (persist metadata or none). */
  result: JsonValue;
  isError: boolean;
  /** Set when the producer cut `result` to fit the event limit, or withheld it (persist metadata): its size in bytes (UTF-8 JSON) before the cut. */
  originalBytes?: number;
  /** The producer's persist hook ran on `result` (what it kept: `redaction.persist`); kept on the stored event. */
  producerRedacted?: true;
}

/**
 * A call waits for a person's approval before it runs. Keyed like the call
 * (its toolCallId must not be empty): published in the call's run.
 */
export interface ToolApprovalRequested extends EventEnvelope {
  type: 'ToolApprovalRequested';
  toolCallId: string;
  roundIndex: number;
  sequenceIndex: number;
  /** Why the call needs approval, as shown to the person. */
  reason?: string;
}

/**
 * The person's answer. May be published in a later run of the conversation
 * than its call (the run that resumed): it pairs with the conversation's
 * call of that toolCallId, round and sequence.
 */
export interface ToolApprovalDecided extends EventEnvelope {
  type: 'ToolApprovalDecided';
  toolCallId: string;
  roundIndex: number;
  sequenceIndex: number;
  approved: boolean;
  reason?: string;
  /** Who decided, as the host names them (passes the detectors like every text). */
  decidedBy?: string;
}

/** The tokens of one service (LLM) call of a run. */
export interface TokenUsage {
  inputTokens: number;
  outputTokens: number;
  /** The model the call went to, when the producer knows it. */
  model?: string;
}

export interface RunCompleted extends EventEnvelope {
  type: 'RunCompleted';
  assistantMessageId: string;
  finishReason: string;
  /** One entry per service call of the run, in call order (schemaVersion 2). */
  usage?: TokenUsage[];
  /**
   * The source numbers the run's final answer cites (`[sourceN]`), in any
   * order, repeats allowed (read as a set); [] when it cites none (schemaVersion 2).
   * Absent: not said, and replay keeps every result whole.
   */
  citedSources?: number[];
}

/** schemaVersion 1 usage: one total for the whole run. */
export interface TokenUsageV1 {
  inputTokens: number;
  outputTokens: number;
}

/**
 * RunCompleted as schemaVersion 1 defined it; read through upcastToolEvent.
 * Spelled out rather than derived from RunCompleted, so a later version
 * cannot change it.
 */
export interface RunCompletedV1 extends EventEnvelope {
  type: 'RunCompleted';
  assistantMessageId: string;
  finishReason: string;
  usage?: TokenUsageV1;
}

export interface RunFailureDetail {
  code: string;
  message: string;
}

export interface RunFailed extends EventEnvelope {
  type: 'RunFailed';
  error: RunFailureDetail;
  /** The tokens of the service calls the run made before it failed, as RunCompleted's. */
  usage?: TokenUsage[];
}

/**
 * What the model answered in one service call of the run, published before
 * the round's calls (the service pairs it with them by run and round in
 * either order): its own text beside the calls, and the opaque reasoning
 * state the same turn must carry back to that provider unchanged. Tool
 * arguments are never repeated here.
 */
export interface ModelResponseReceived extends EventEnvelope {
  type: 'ModelResponseReceived';
  roundIndex: number;
  /** `openai`, `anthropic`, `google`, `bedrock`, or another name: reasoning is replayed only to the provider it came from. */
  provider: string;
  model: string;
  /** The response's own text beside its calls ("I'll check the order first"). */
  text?: string;
  /**
   * The provider's own items that precede the calls, each as published:
   * OpenAI `reasoning` items, Anthropic `thinking` / `redacted_thinking`
   * blocks, Gemini thought parts with their signatures, Bedrock
   * `reasoningContent` blocks. Never redacted (signed state cannot be);
   * kept apart from the event and only as long as the policy's
   * `reasoning.keep` allows (by default until the turn ends).
   */
  reasoning?: JsonObject[];
  /** Tool call id to the opaque signature carried on that call (Gemini's `thoughtSignature` of a `functionCall` part). */
  callSignatures?: Record<string, string>;
  /** Tool call id to the provider's own item id (OpenAI's `fc_...`), replayed with the reasoning it follows. */
  callItemIds?: Record<string, string>;
  /**
   * On the stored event: the size in bytes (UTF-8 JSON) of its reasoning,
   * signatures and item ids, which rest apart from it (never accepted from
   * producers).
   */
  reasoningBytes?: number;
}

/** An event in the current schema version: what every rule consumes. */
export type ToolEvent =
  ToolCallRequested | ToolResultReceived | ToolApprovalRequested | ToolApprovalDecided | RunCompleted | RunFailed | ModelResponseReceived;

/** The events about one invocation: keyed by toolCallId, roundIndex and sequenceIndex. */
export type InvocationEvent = ToolCallRequested | ToolResultReceived | ToolApprovalRequested | ToolApprovalDecided;

/** schemaVersion 1: only RunCompleted differs from the current shapes. */
export type ToolEventV1 =
  ToolCallRequested | ToolResultReceived | ToolApprovalRequested | ToolApprovalDecided | RunCompletedV1 | RunFailed | ModelResponseReceived;

/**
 * An event in any supported version, as validated and as stored (events
 * are never rewritten to a newer version). upcastToolEvent turns it into a
 * ToolEvent.
 */
export type StoredToolEvent = ToolEvent | ToolEventV1;
