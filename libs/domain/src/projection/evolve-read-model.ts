import type {
  InvocationEvent,
  ModelResponseReceived,
  RunCompleted,
  RunFailed,
  TokenUsage,
  ToolApprovalDecided,
  ToolApprovalRequested,
  ToolCallRequested,
  ToolEvent,
  ToolResultReceived,
} from '@toolhistory/contract';
import { InvocationRowIndex } from './cross-run-pairing';
import { conversationKeyString, isInvocationEvent, pairKeyOf, responseKeyString, runKeyString } from './read-model-keys';
import type { ConversationRow, ForkProvenance, InvocationRow, ModelResponseRow, RunRow } from './read-model.types';
import type { PayloadField } from '../encryption/invocation-seals';
import { callTokens, resultTokens, TokenCounter } from './invocation-tokens';
import { stricterPersist } from '../redaction/redact-event';
import { PAYLOAD_FIELDS, withSeal } from '../encryption/invocation-seals';

const earliest = (a: string, b: string): string => (Date.parse(b) < Date.parse(a) ? b : a);
const latest = (a: string, b: string): string => (Date.parse(b) > Date.parse(a) ? b : a);

export function evolveConversation(row: ConversationRow | undefined, event: ToolEvent): ConversationRow {
  if (!row) {
    return {
      tenantId: event.tenantId,
      conversationId: event.conversationId,
      channel: event.channel,
      firstEventAt: event.occurredAt,
      lastEventAt: event.occurredAt,
      eventCount: 1,
    };
  }
  // The channel is the one the conversation was first recorded with.
  return {
    ...row,
    firstEventAt: earliest(row.firstEventAt, event.occurredAt),
    lastEventAt: latest(row.lastEventAt, event.occurredAt),
    eventCount: row.eventCount + 1,
  };
}

function newRun(event: ToolEvent): RunRow {
  return {
    tenantId: event.tenantId,
    conversationId: event.conversationId,
    runId: event.runId,
    channel: event.channel,
    status: 'running',
    startedAt: event.occurredAt,
    lastEventAt: event.occurredAt,
    endedAt: null,
    assistantMessageId: null,
    finishReason: null,
    inputTokens: null,
    outputTokens: null,
    errorCode: null,
    errorMessage: null,
    userMessageId: event.userMessageId ?? null,
    citedSources: null,
  };
}

/**
 * A run's first terminal event decides its status; later terminal events
 * (redeliveries under new ids, contradicting producers) stay in the event
 * store for audit but do not flip it.
 */
export function evolveRun(row: RunRow | undefined, event: ToolEvent): RunRow {
  const base = row ?? newRun(event);
  const next: RunRow = {
    ...base,
    startedAt: earliest(base.startedAt, event.occurredAt),
    lastEventAt: latest(base.lastEventAt, event.occurredAt),
    userMessageId: base.userMessageId ?? event.userMessageId ?? null,
  };
  if (base.status !== 'running') return next;
  if (event.type === 'RunCompleted') return completeRun(next, event);
  if (event.type === 'RunFailed') return failRun(next, event);
  return next;
}

function completeRun(run: RunRow, event: RunCompleted): RunRow {
  return {
    ...run,
    status: 'completed',
    endedAt: event.occurredAt,
    assistantMessageId: event.assistantMessageId,
    finishReason: event.finishReason,
    inputTokens: tokenTotal(event.usage, 'inputTokens'),
    outputTokens: tokenTotal(event.usage, 'outputTokens'),
    citedSources: event.citedSources === undefined ? null : [...new Set(event.citedSources)].sort((a, b) => a - b),
  };
}

/** A run's tokens are the sum over its service calls; null when the producer reported no usage. */
function tokenTotal(usage: readonly TokenUsage[] | undefined, kind: 'inputTokens' | 'outputTokens'): number | null {
  return usage === undefined ? null : usage.reduce((total, call) => total + call[kind], 0);
}

function failRun(run: RunRow, event: RunFailed): RunRow {
  return {
    ...run,
    status: 'failed',
    endedAt: event.occurredAt,
    errorCode: event.error.code,
    errorMessage: event.error.message,
    // Billed like a completed run: the service calls it made before failing were paid for.
    inputTokens: tokenTotal(event.usage, 'inputTokens'),
    outputTokens: tokenTotal(event.usage, 'outputTokens'),
  };
}

/** An invocation's approval and resumption facts before any event about them is recorded. */
export const NOT_YET_APPROVED_OR_RESUMED = Object.freeze({
  approvalRequestedAt: null,
  approvalRequestReason: null,
  approvalDecidedAt: null,
  approved: null,
  approvalDecidedBy: null,
  approvalDecisionReason: null,
  decisionRunId: null,
  resultRunId: null,
} satisfies Partial<InvocationRow>);

function newInvocation(event: InvocationEvent): InvocationRow {
  return {
    tenantId: event.tenantId,
    conversationId: event.conversationId,
    runId: event.runId,
    pairKey: pairKeyOf(event),
    roundIndex: event.roundIndex,
    sequenceIndex: event.sequenceIndex,
    toolCallId: event.toolCallId,
    toolName: null,
    arguments: null,
    result: undefined,
    isError: null,
    requestedAt: null,
    completedAt: null,
    callEventId: null,
    resultEventId: null,
    callAfterRunEnd: false,
    persist: 'full',
    producerRedacted: false,
    argumentRedactions: {},
    resultRedactions: {},
    argumentsBytes: null,
    resultBytes: null,
    callTokens: null,
    resultTokens: null,
    ...NOT_YET_APPROVED_OR_RESUMED,
  };
}

/** The producer's size of a payload it cut wins over the size the service received; nothing when the policy keeps nothing. */
function receivedBytes(event: ToolCallRequested | ToolResultReceived): number | null {
  if (event.redaction?.persist === 'none') return null;
  return event.originalBytes ?? event.redaction?.originalBytes ?? null;
}

/** A later run's id, when the event came from one (the run that resumed after a person answered). */
const laterRunOf = (row: InvocationRow, event: InvocationEvent): string | null => (event.runId === row.runId ? null : event.runId);

/**
 * Pairs a call with its result whichever arrives first. The first call and
 * the first result recorded for a key win; repeats under other event ids are
 * kept in the event store only.
 */
export function evolveInvocation(
  row: InvocationRow | undefined,
  event: InvocationEvent,
  runEnded: boolean,
  tokens: TokenCounter,
): InvocationRow {
  const base = row ?? newInvocation(event);
  if (event.type === 'ToolApprovalRequested') return approvalRequested(base, event);
  if (event.type === 'ToolApprovalDecided') return approvalDecided(base, event);
  if (event.type === 'ToolCallRequested') {
    if (base.callEventId !== null) return base;
    return {
      ...base,
      // The call is authoritative for position and id; a result may have come first.
      roundIndex: event.roundIndex,
      sequenceIndex: event.sequenceIndex,
      toolCallId: event.toolCallId,
      toolName: event.toolName,
      arguments: event.arguments,
      requestedAt: event.occurredAt,
      callEventId: event.eventId,
      callAfterRunEnd: runEnded,
      // A result recorded first may have made it stricter (its producer withheld it).
      persist: stricterPersist(base.persist, event.redaction?.persist ?? 'full'),
      producerRedacted: base.producerRedacted || event.producerRedacted === true,
      argumentRedactions: event.redaction?.counts ?? {},
      argumentsBytes: receivedBytes(event),
      callTokens: callTokens(tokens, event.toolName, event.arguments),
      ...forkedFromOf(event, null),
      ...sealsOf(base, 'arguments', event),
    };
  }
  if (base.resultEventId !== null) return base;
  return {
    ...base,
    result: event.result,
    isError: event.isError,
    completedAt: event.occurredAt,
    resultEventId: event.eventId,
    // Only a producer's choice for the result counts here: the policy's persist is the call's tool rule, which the call brings.
    persist: event.producerRedacted === true ? stricterPersist(base.persist, event.redaction?.persist ?? 'full') : base.persist,
    producerRedacted: base.producerRedacted || event.producerRedacted === true,
    resultRedactions: event.redaction?.counts ?? {},
    resultBytes: receivedBytes(event),
    resultTokens: resultTokens(tokens, event.result),
    resultRunId: laterRunOf(base, event),
    ...forkedFromOf(event, base.forkedFrom ?? null),
    ...sealsOf(base, 'result', event),
  };
}

/**
 * Where the payload now in the row rests sealed, when its event was sealed
 * (encryption at rest); nothing otherwise. An event read after its payload's
 * retention ended (a rebuild, a fork's copy) makes the field expired at once.
 */
function sealsOf(row: InvocationRow, field: PayloadField, event: InvocationEvent): Pick<InvocationRow, 'payloadSeals' | 'expiredPayloads'> {
  if (event.payloadExpired) return { expiredPayloads: PAYLOAD_FIELDS.filter((f) => f === field || row.expiredPayloads?.includes(f)) };
  return event.sealed === undefined ? {} : { payloadSeals: withSeal(row.payloadSeals, field, event.sealed) };
}

/** A fork's copy names its origin: the call's, else the result's (a result copied without its call). */
function forkedFromOf(event: ToolCallRequested | ToolResultReceived, current: ForkProvenance | null): { forkedFrom?: ForkProvenance } {
  if (current !== null) return { forkedFrom: current };
  return event.forkedFrom === undefined
    ? {}
    : { forkedFrom: { conversationId: event.forkedFrom.conversationId, position: event.forkedFrom.position } };
}

/** The first request counts; a repeat (a re-run step under a new id) changes nothing. */
function approvalRequested(row: InvocationRow, event: ToolApprovalRequested): InvocationRow {
  if (row.approvalRequestedAt !== null) return row;
  return {
    ...row,
    approvalRequestedAt: event.occurredAt,
    approvalRequestReason: event.reason ?? null,
    ...sealsOf(row, 'approvalRequestReason', event),
  };
}

/** The first decision counts: a person's answer is not taken back by a contradicting repeat. */
function approvalDecided(row: InvocationRow, event: ToolApprovalDecided): InvocationRow {
  if (row.approvalDecidedAt !== null) return row;
  return {
    ...row,
    approvalDecidedAt: event.occurredAt,
    approved: event.approved,
    approvalDecidedBy: event.decidedBy ?? null,
    approvalDecisionReason: event.reason ?? null,
    decisionRunId: laterRunOf(row, event),
    ...sealsOf(row, 'approvalDecisionReason', event),
  };
}

export interface ReadModelState {
  conversations: Map<string, ConversationRow>;
  runs: Map<string, RunRow>;
  invocations: Map<string, InvocationRow>;
  /** Absent: no response of the keys touched is recorded yet (as an empty map). */
  responses?: Map<string, ModelResponseRow>;
}

export interface ReadModelChanges {
  conversations: ConversationRow[];
  runs: RunRow[];
  invocations: InvocationRow[];
  responses: ModelResponseRow[];
}

/** The first response recorded for a round counts; a repeat under another id changes nothing. */
export function evolveResponse(row: ModelResponseRow | undefined, event: ModelResponseReceived, tokens: TokenCounter): ModelResponseRow {
  if (row !== undefined) return row;
  return {
    tenantId: event.tenantId,
    conversationId: event.conversationId,
    runId: event.runId,
    roundIndex: event.roundIndex,
    provider: event.provider,
    model: event.model,
    text: event.text ?? null,
    reasoningBytes: event.reasoningBytes ?? 0,
    textTokens: event.text === undefined ? 0 : tokens(event.text),
    textSeal: event.text !== undefined && event.sealed !== undefined ? event.sealed : null,
    responseEventId: event.eventId,
    respondedAt: event.occurredAt,
  };
}

/**
 * Folds events, in stream order, into the rows they touch. `state` holds the
 * current rows for those keys (absent = not yet recorded); the result lists
 * every row that changed, each once, ready to upsert.
 */
export function projectEvents(state: ReadModelState, events: readonly ToolEvent[], tokens: TokenCounter): ReadModelChanges {
  const conversations = new Map(state.conversations);
  const runs = new Map(state.runs);
  const invocations = new InvocationRowIndex(state.invocations);
  const responses = new Map(state.responses);
  const changed = {
    conversations: new Set<string>(),
    runs: new Set<string>(),
    invocations: new Set<string>(),
    responses: new Set<string>(),
  };

  for (const event of events) {
    const conversationKey = conversationKeyString(event);
    conversations.set(conversationKey, evolveConversation(conversations.get(conversationKey), event));
    changed.conversations.add(conversationKey);

    const runKey = runKeyString(event);
    const runBefore = runs.get(runKey);
    if (isInvocationEvent(event)) {
      // Its own run's row, else an earlier run's call that awaits this decision or result (cross-run-pairing.ts).
      const key = invocations.keyFor(event);
      const runEnded = runBefore !== undefined && runBefore.status !== 'running';
      invocations.set(key, evolveInvocation(invocations.get(key), event, runEnded, tokens));
      changed.invocations.add(key);
    }
    if (event.type === 'ModelResponseReceived') {
      const key = responseKeyString(event);
      responses.set(key, evolveResponse(responses.get(key), event, tokens));
      changed.responses.add(key);
    }
    runs.set(runKey, evolveRun(runBefore, event));
    changed.runs.add(runKey);
  }

  return {
    conversations: [...changed.conversations].map((k) => conversations.get(k)!),
    runs: [...changed.runs].map((k) => runs.get(k)!),
    invocations: [...changed.invocations].map((k) => invocations.get(k)!),
    responses: [...changed.responses].map((k) => responses.get(k)!),
  };
}
