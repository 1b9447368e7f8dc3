import type { RunCompleted, RunFailed, TokenUsage, ToolCallRequested, ToolEvent, ToolResultReceived } from '@toolhistory/contract';
import { conversationKeyString, invocationKeyString, isInvocationEvent, pairKeyOf, runKeyString } from './read-model-keys';
import type { ConversationRow, InvocationRow, RunRow } from './read-model.types';
import { callTokens, resultTokens, TokenCounter } from './invocation-tokens';

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
  };
}

function newInvocation(event: ToolCallRequested | ToolResultReceived): InvocationRow {
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
    argumentRedactions: {},
    resultRedactions: {},
    argumentsBytes: null,
    resultBytes: null,
    callTokens: null,
    resultTokens: null,
  };
}

/**
 * Pairs a call with its result whichever arrives first. The first call and
 * the first result recorded for a key win; repeats under other event ids are
 * kept in the event store only.
 */
export function evolveInvocation(
  row: InvocationRow | undefined,
  event: ToolCallRequested | ToolResultReceived,
  runEnded: boolean,
  tokens: TokenCounter,
): InvocationRow {
  const base = row ?? newInvocation(event);
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
      persist: event.redaction?.persist ?? 'full',
      argumentRedactions: event.redaction?.counts ?? {},
      argumentsBytes: event.redaction?.originalBytes ?? null,
      callTokens: callTokens(tokens, event.toolName, event.arguments),
    };
  }
  if (base.resultEventId !== null) return base;
  return {
    ...base,
    result: event.result,
    isError: event.isError,
    completedAt: event.occurredAt,
    resultEventId: event.eventId,
    resultRedactions: event.redaction?.counts ?? {},
    resultBytes: event.redaction?.originalBytes ?? null,
    resultTokens: resultTokens(tokens, event.result),
  };
}

export interface ReadModelState {
  conversations: Map<string, ConversationRow>;
  runs: Map<string, RunRow>;
  invocations: Map<string, InvocationRow>;
}

export interface ReadModelChanges {
  conversations: ConversationRow[];
  runs: RunRow[];
  invocations: InvocationRow[];
}

/**
 * Folds events, in stream order, into the rows they touch. `state` holds the
 * current rows for those keys (absent = not yet recorded); the result lists
 * every row that changed, each once, ready to upsert.
 */
export function projectEvents(state: ReadModelState, events: readonly ToolEvent[], tokens: TokenCounter): ReadModelChanges {
  const conversations = new Map(state.conversations);
  const runs = new Map(state.runs);
  const invocations = new Map(state.invocations);
  const changed = { conversations: new Set<string>(), runs: new Set<string>(), invocations: new Set<string>() };

  for (const event of events) {
    const conversationKey = conversationKeyString(event);
    conversations.set(conversationKey, evolveConversation(conversations.get(conversationKey), event));
    changed.conversations.add(conversationKey);

    const runKey = runKeyString(event);
    const runBefore = runs.get(runKey);
    if (isInvocationEvent(event)) {
      const key = invocationKeyString({ ...event, pairKey: pairKeyOf(event) });
      const runEnded = runBefore !== undefined && runBefore.status !== 'running';
      invocations.set(key, evolveInvocation(invocations.get(key), event, runEnded, tokens));
      changed.invocations.add(key);
    }
    runs.set(runKey, evolveRun(runBefore, event));
    changed.runs.add(runKey);
  }

  return {
    conversations: [...changed.conversations].map((k) => conversations.get(k)!),
    runs: [...changed.runs].map((k) => runs.get(k)!),
    invocations: [...changed.invocations].map((k) => invocations.get(k)!),
  };
}
