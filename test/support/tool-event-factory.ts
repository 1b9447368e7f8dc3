import { randomUUID } from 'node:crypto';
import { CURRENT_SCHEMA_VERSION } from '../../libs/contract/src';
import type {
  ModelResponseReceived,
  RunCompleted,
  RunCompletedV1,
  RunFailed,
  ToolApprovalDecided,
  ToolApprovalRequested,
  ToolCallRequested,
  ToolEvent,
  ToolResultReceived,
} from '../../libs/contract/src';

export interface RunScope {
  tenantId: string;
  conversationId: string;
  runId: string;
  channel?: string;
  /** Carried by every event of the run when set. */
  userMessageId?: string;
}

let clock = Date.parse('2026-01-01T00:00:00.000Z');
/** Strictly increasing timestamps, so traces have a well-defined time order. */
export function nextTimestamp(): string {
  clock += 1_000;
  return new Date(clock).toISOString();
}

function envelope(scope: RunScope, occurredAt?: string) {
  return {
    eventId: randomUUID(),
    schemaVersion: CURRENT_SCHEMA_VERSION,
    tenantId: scope.tenantId,
    conversationId: scope.conversationId,
    channel: scope.channel ?? 'web',
    runId: scope.runId,
    occurredAt: occurredAt ?? nextTimestamp(),
    ...(scope.userMessageId === undefined ? {} : { userMessageId: scope.userMessageId }),
  };
}

export function toolCall(
  scope: RunScope,
  fields: Partial<Omit<ToolCallRequested, 'type'>> & { roundIndex: number; sequenceIndex: number },
): ToolCallRequested {
  return {
    ...envelope(scope, fields.occurredAt),
    type: 'ToolCallRequested',
    toolCallId: `call_${fields.roundIndex}_${fields.sequenceIndex}_${scope.runId}`,
    toolName: 'lookup_order',
    arguments: { orderId: 'A-1001' },
    ...fields,
  };
}

export function toolResult(
  scope: RunScope,
  fields: Partial<Omit<ToolResultReceived, 'type'>> & { roundIndex: number; sequenceIndex: number },
): ToolResultReceived {
  return {
    ...envelope(scope, fields.occurredAt),
    type: 'ToolResultReceived',
    toolCallId: `call_${fields.roundIndex}_${fields.sequenceIndex}_${scope.runId}`,
    result: { status: 'shipped' },
    isError: false,
    ...fields,
  };
}

/** A person is asked to approve the call at (round, sequence) of `callRun` (its id as toolCall gives it). */
export function approvalRequested(
  scope: RunScope,
  fields: Partial<Omit<ToolApprovalRequested, 'type'>> & { roundIndex: number; sequenceIndex: number },
): ToolApprovalRequested {
  return {
    ...envelope(scope, fields.occurredAt),
    type: 'ToolApprovalRequested',
    toolCallId: `call_${fields.roundIndex}_${fields.sequenceIndex}_${scope.runId}`,
    reason: 'needs a person',
    ...fields,
  };
}

/** A person's decision; pass the call's toolCallId when it is published in a later run than the call. */
export function approvalDecided(
  scope: RunScope,
  fields: Partial<Omit<ToolApprovalDecided, 'type'>> & { roundIndex: number; sequenceIndex: number; approved: boolean },
): ToolApprovalDecided {
  return {
    ...envelope(scope, fields.occurredAt),
    type: 'ToolApprovalDecided',
    toolCallId: `call_${fields.roundIndex}_${fields.sequenceIndex}_${scope.runId}`,
    ...fields,
  };
}

/** The model's response in round `roundIndex` of the run: Anthropic-style thinking by default. */
export function modelResponse(
  scope: RunScope,
  fields: Partial<Omit<ModelResponseReceived, 'type'>> & { roundIndex: number },
): ModelResponseReceived {
  return {
    ...envelope(scope, fields.occurredAt),
    type: 'ModelResponseReceived',
    provider: 'anthropic',
    model: 'claude-sonnet-4-5',
    text: 'Let me look that up.',
    reasoning: [
      { type: 'thinking', thinking: `round ${fields.roundIndex}: the order first`, signature: `sig-${scope.runId}-${fields.roundIndex}` },
    ],
    ...fields,
  };
}

export function runCompleted(scope: RunScope, fields: Partial<Omit<RunCompleted, 'type'>> = {}): RunCompleted {
  return {
    ...envelope(scope, fields.occurredAt),
    type: 'RunCompleted',
    assistantMessageId: `msg_${scope.runId}`,
    finishReason: 'stop',
    // Two service calls: 1200 input and 80 output tokens for the run.
    usage: [
      { inputTokens: 500, outputTokens: 30, model: 'model-a' },
      { inputTokens: 700, outputTokens: 50, model: 'model-a' },
    ],
    ...fields,
  };
}

/**
 * A RunCompleted as a schemaVersion 1 producer publishes it: one usage
 * total for the run (1200 input and 80 output tokens unless given). Other
 * types have the same shape in version 1: pass `schemaVersion: 1`.
 */
export function runCompletedV1(scope: RunScope, fields: Partial<Omit<RunCompletedV1, 'type'>> = {}): RunCompletedV1 {
  return {
    ...envelope(scope, fields.occurredAt),
    schemaVersion: 1,
    type: 'RunCompleted',
    assistantMessageId: `msg_${scope.runId}`,
    finishReason: 'stop',
    usage: { inputTokens: 1200, outputTokens: 80 },
    ...fields,
  };
}

export function runFailed(scope: RunScope, fields: Partial<Omit<RunFailed, 'type'>> = {}): RunFailed {
  return {
    ...envelope(scope, fields.occurredAt),
    type: 'RunFailed',
    error: { code: 'provider_timeout', message: 'the model did not answer in time' },
    ...fields,
  };
}

/** A whole run: `rounds[i]` parallel calls in round i, each answered, then completed. */
export function completedRun(scope: RunScope, callsPerRound: readonly number[]): ToolEvent[] {
  const events: ToolEvent[] = [];
  callsPerRound.forEach((calls, roundIndex) => {
    for (let s = 0; s < calls; s += 1) events.push(toolCall(scope, { roundIndex, sequenceIndex: s }));
    for (let s = 0; s < calls; s += 1) events.push(toolResult(scope, { roundIndex, sequenceIndex: s }));
  });
  events.push(runCompleted(scope));
  return events;
}
