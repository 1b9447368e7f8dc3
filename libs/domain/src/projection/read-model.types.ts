import type { JsonObject, JsonValue } from '@toolhistory/contract';
import type { PersistMode } from '../policy/policy-vocabulary';

export type RunStatus = 'running' | 'completed' | 'failed';

export interface ConversationRow {
  tenantId: string;
  conversationId: string;
  channel: string;
  firstEventAt: string;
  lastEventAt: string;
  /** Events applied so far: a version that changes whenever any of the conversation's rows does. */
  eventCount: number;
}

export interface RunRow {
  tenantId: string;
  conversationId: string;
  runId: string;
  channel: string;
  status: RunStatus;
  startedAt: string;
  lastEventAt: string;
  endedAt: string | null;
  assistantMessageId: string | null;
  finishReason: string | null;
  inputTokens: number | null;
  outputTokens: number | null;
  errorCode: string | null;
  errorMessage: string | null;
}

export interface InvocationRow {
  tenantId: string;
  conversationId: string;
  runId: string;
  pairKey: string;
  roundIndex: number;
  sequenceIndex: number;
  toolCallId: string;
  toolName: string | null;
  arguments: JsonObject | null;
  /** undefined: no result recorded yet (a JSON result may itself be any value). */
  result: JsonValue | undefined;
  isError: boolean | null;
  requestedAt: string | null;
  completedAt: string | null;
  callEventId: string | null;
  resultEventId: string | null;
  callAfterRunEnd: boolean;
  /** What the call's tool rule kept: "full" until the call is recorded. */
  persist: PersistMode;
  /** Markers applied to the arguments and to the result, per kind (never the values). */
  argumentRedactions: Record<string, number>;
  resultRedactions: Record<string, number>;
  /** Sizes as received, before redaction; null when unknown or when the policy keeps nothing. */
  argumentsBytes: number | null;
  resultBytes: number | null;
  /** Tokens of the call and of the result as replayed (invocation-tokens.ts), counted once when recorded; null until then. */
  callTokens: number | null;
  resultTokens: number | null;
}
