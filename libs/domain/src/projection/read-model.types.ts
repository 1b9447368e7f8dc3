import type { JsonObject, JsonValue, SealedPayload } from '@toolhistory/contract';
import type { PersistMode } from '../policy/policy-vocabulary';
import type { InvocationSeals, PayloadField } from '../encryption/invocation-seals';

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
  /** The host's message that started the run (the first userMessageId its events carried). */
  userMessageId: string | null;
  /**
   * The source numbers the run's final answer cites (RunCompleted.citedSources),
   * sorted, once each; null when the run did not say (or has not completed).
   */
  citedSources: number[] | null;
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
  /**
   * What was kept of the payloads: the call's stored persist, made stricter
   * by a result's whose producer redacted it (a producer may withhold a
   * result and not its call); "full" until either is recorded.
   */
  persist: PersistMode;
  /** The call's or the result's producer redacted its payload before publishing. */
  producerRedacted: boolean;
  /** Markers applied to the arguments and to the result, per kind (never the values). */
  argumentRedactions: Record<string, number>;
  resultRedactions: Record<string, number>;
  /** Sizes as received, before redaction; null when unknown or when the policy keeps nothing. */
  argumentsBytes: number | null;
  resultBytes: number | null;
  /** Tokens of the call and of the result as replayed (invocation-tokens.ts), counted once when recorded; null until then. */
  callTokens: number | null;
  resultTokens: number | null;
  /** When a person's approval was asked for (the first ToolApprovalRequested), and why. */
  approvalRequestedAt: string | null;
  approvalRequestReason: string | null;
  /** The first ToolApprovalDecided: when, the answer, by whom and why. */
  approvalDecidedAt: string | null;
  approved: boolean | null;
  approvalDecidedBy: string | null;
  approvalDecisionReason: string | null;
  /** The run that recorded the decision, or the result, when it is a later run than the call's (the run that resumed). */
  decisionRunId: string | null;
  resultRunId: string | null;
  /** On a forked conversation's copy: the source conversation and the position of the copied call (else result); absent or null otherwise. */
  forkedFrom?: ForkProvenance | null;
  /**
   * Payloads sealed at rest (docs/adr/033): per field, the sealed payload of
   * the event it came from (its key and end of retention). Absent or null:
   * every payload in clear.
   */
  payloadSeals?: InvocationSeals | null;
  /** Payloads whose retention ended: nothing of them is kept (their fields read as empty). */
  expiredPayloads?: readonly PayloadField[];
}

/** What the model answered in one round of a run (ModelResponseReceived); its reasoning state rests apart (reasoning-apart.ts). */
export interface ModelResponseRow {
  tenantId: string;
  conversationId: string;
  runId: string;
  roundIndex: number;
  provider: string;
  model: string;
  /** The response's own text beside its calls (redacted); null when it had none. */
  text: string | null;
  /** The size of its reasoning state when recorded (0: none); whether any of it still rests is the state's. */
  reasoningBytes: number;
  /** What the text takes in the model's context, counted once when recorded (0: no text). */
  textTokens: number;
  /** With encryption at rest: the text's seal (the text column then stays empty; readers open it). */
  textSeal?: SealedPayload | null;
  responseEventId: string;
  respondedAt: string;
}

export interface ForkProvenance {
  conversationId: string;
  /** A global position, as a decimal string. */
  position: string;
}
