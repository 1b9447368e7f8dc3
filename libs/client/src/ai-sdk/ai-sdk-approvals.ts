import type { AssistantModelMessage, ModelMessage, ToolApprovalResponse, ToolModelMessage } from 'ai';
import type { PendingApproval } from '../generated/toolhistory/v1/toolhistory';
import { aiSdkCallPartOptions, aiSdkResponseParts } from '../history-formats';
import type { CallPosition, RecordedDecision, RecordedResult } from '../recording/recorded-run';
import {
  callPositionInMessages,
  type KnownPendingApproval,
  type PlacedBy,
  type PlacedCall,
  resumedCallPosition,
} from '../recording/resumed-calls';
import type { JsonValue } from '../tool-event-types';
import { fromModelOutput, type StepInvocation } from './ai-sdk-step-mapper';

/** Where a call sits in the run that made it: its approval events and its result are keyed by these and its toolCallId. */
export type { CallPosition, KnownPendingApproval };

/** A person's answer to an approval request, found in the input messages of the call that resumes: a decision on the call of the run that asked. */
export interface ApprovalAnswer extends RecordedDecision {
  approvalId: string;
  /**
   * How the call's round and sequence were found: from an approval id this
   * package made (`pendingApprovalMessages`), from the `pendingApprovals`
   * the host passed, or from the call's place in the messages.
   */
  positionFrom: PlacedBy;
}

/** A resumed call's outcome: what the SDK sent the model for it before the call's first model call (its value and whether it is an error). */
export type ResumedResult = Omit<RecordedResult, 'result' | 'isError'> & { result: NonNullable<StepInvocation['result']> };

const APPROVAL_ID = /^toolhistory:(\d+):(\d+):(.+)$/s;

/**
 * The approval id `pendingApprovalMessages` gives a replayed approval
 * request: it carries the call's round and sequence, so the run that gets
 * the answer records it against the right call. The SDK treats approval
 * ids as opaque and never sends them to the model.
 */
export function replayedApprovalId(pending: KnownPendingApproval): string {
  return `toolhistory:${pending.roundIndex}:${pending.sequenceIndex}:${pending.toolCallId}`;
}

function positionInApprovalId(approvalId: string, toolCallId: string): CallPosition | undefined {
  const match = APPROVAL_ID.exec(approvalId);
  if (match === null || match[3] !== toolCallId) return undefined;
  return { roundIndex: Number(match[1]), sequenceIndex: Number(match[2]) };
}

/**
 * The replay's calls awaiting approval as the AI SDK wants them back: per
 * round, an assistant message with the round's response as the model gave
 * it (its reasoning parts, then its text: what the replay's `round` of each
 * pending approval holds; Claude with thinking refuses a tool call without
 * its thinking first), the tool-call parts and their tool-approval-request
 * parts. Put them after the conversation's messages and answer them with a
 * tool message of `toolApprovalResponse` parts: the next
 * generateText/streamText call then runs the approved tools (with the
 * arguments as recorded, so after any redaction the policy applies) and
 * tells the model about the denied ones. Without an answer, leave them out:
 * a tool call without a result is an invalid prompt. `provider`: as for the
 * replay request (the model's provider id picks the options' key).
 */
export function pendingApprovalMessages(pendingApprovals: readonly PendingApproval[], provider?: string): AssistantModelMessage[] {
  const rounds: PendingApproval[][] = [];
  for (const pending of pendingApprovals) {
    const last = rounds.at(-1)?.[0];
    if (last !== undefined && last.runId === pending.runId && last.roundIndex === pending.roundIndex) rounds.at(-1)!.push(pending);
    else rounds.push([pending]);
  }
  // The SDK's own order: the round's reasoning and text, its calls, then their approval requests.
  return rounds.map((calls) => {
    const round = calls.find((pending) => pending.round !== undefined)?.round;
    return {
      role: 'assistant',
      content: [
        ...(round === undefined ? [] : aiSdkResponseParts(round, provider)),
        ...calls.map((pending) => ({
          type: 'tool-call' as const,
          toolCallId: pending.toolCallId,
          toolName: pending.toolName,
          input: JSON.parse(pending.argumentsJson || '{}') as JsonValue,
          ...(round === undefined ? {} : aiSdkCallPartOptions(round, pending.toolCallId, provider)),
        })),
        ...calls.map((pending) => ({
          type: 'tool-approval-request' as const,
          approvalId: replayedApprovalId(pending),
          toolCallId: pending.toolCallId,
        })),
      ],
    };
  });
}

/** The tool-approval-response part that answers a replayed pending approval (see pendingApprovalMessages). */
export function toolApprovalResponse(pending: KnownPendingApproval, answer: { approved: boolean; reason?: string }): ToolApprovalResponse {
  return {
    type: 'tool-approval-response',
    approvalId: replayedApprovalId(pending),
    approved: answer.approved,
    ...(answer.reason === undefined ? {} : { reason: answer.reason }),
  };
}

/**
 * The approval answers a call's input messages carry, as the SDK collects
 * them: the tool-approval-response parts of the last message when it is a
 * tool message, for client-executed calls that have no result yet, once
 * per call. Each with the round and sequence of its call in the run that
 * asked, found (in this order) from an approval id made by
 * pendingApprovalMessages, from `pendingApprovals` (the replay's), or from
 * the call's place in the messages: its position among the client tool
 * calls of its assistant message, and the count of assistant messages with
 * such calls since its run began (after the last user message, or the last
 * tool message of approval answers, before it). That last way is right when
 * the messages hold the asking run's steps as the SDK returned them (its
 * response messages, or UI messages converted by convertToModelMessages).
 */
export function approvalAnswers(
  messages: readonly ModelMessage[],
  pendingApprovals: readonly KnownPendingApproval[] = [],
): ApprovalAnswer[] {
  const last = messages.at(-1);
  if (last?.role !== 'tool') return [];
  const answered = new Set(last.content.flatMap((part) => (part.type === 'tool-result' ? [part.toolCallId] : [])));
  const requests = new Map<string, string>();
  for (const message of messages) {
    if (message.role !== 'assistant' || typeof message.content === 'string') continue;
    for (const part of message.content) if (part.type === 'tool-approval-request') requests.set(part.approvalId, part.toolCallId);
  }
  const seen = new Set<string>();
  const answers: ApprovalAnswer[] = [];
  for (const part of last.content) {
    if (part.type !== 'tool-approval-response' || part.providerExecuted === true) continue;
    const toolCallId = requests.get(part.approvalId);
    if (toolCallId === undefined || answered.has(toolCallId) || seen.has(toolCallId)) continue;
    const located = locateCall(messages, toolCallId);
    // A provider-executed call, or none at all (the SDK refuses that prompt itself).
    if (located === undefined) continue;
    seen.add(toolCallId);
    const placed = resumedCallPosition(toolCallId, {
      fromId: positionInApprovalId(part.approvalId, toolCallId),
      pendingApprovals,
      fromMessages: located,
    })!;
    answers.push({
      approvalId: part.approvalId,
      toolCallId,
      toolName: located.toolName,
      approved: part.approved,
      ...(part.reason === undefined ? {} : { reason: part.reason }),
      ...placed.position,
      positionFrom: placed.placedBy,
    });
  }
  return answers;
}

/** The call's client tool-call part (the latest, should an id repeat) and its place by the messages alone. */
function locateCall(messages: readonly ModelMessage[], toolCallId: string): PlacedCall | undefined {
  return callPositionInMessages(messages, toolCallId, {
    callsOf: (message) => clientToolCalls(message).map((call) => ({ id: call.toolCallId, name: call.toolName })),
    startsRun,
  });
}

function clientToolCalls(message: ModelMessage): Array<{ toolCallId: string; toolName: string }> {
  if (message.role !== 'assistant' || typeof message.content === 'string') return [];
  return message.content.flatMap((part) => (part.type === 'tool-call' && part.providerExecuted !== true ? [part] : []));
}

/** A run starts after the user's message, or after the tool message that answers approvals (a run that resumes). */
function startsRun(message: ModelMessage): boolean {
  return message.role === 'user' || (message.role === 'tool' && message.content.some((part) => part.type === 'tool-approval-response'));
}

/**
 * The messages of a call's first step split into what the host passed and
 * the tool message the SDK added before the first model call, with the
 * outcomes of the calls the host's approval answers resumed (prepareStep
 * sees both at step 0).
 */
export function splitResumedStep(messages: readonly ModelMessage[]): { input: readonly ModelMessage[]; executed?: ToolModelMessage } {
  const last = messages.at(-1);
  const before = messages.at(-2);
  const answers = (message: ModelMessage | undefined) =>
    message?.role === 'tool' && message.content.some((part) => part.type === 'tool-approval-response');
  if (last?.role === 'tool' && !answers(last) && answers(before)) return { input: messages.slice(0, -1), executed: last };
  return { input: messages };
}

/**
 * What the resumed calls produced, as the model is sent it: for each
 * approved call the tool-result part of the SDK's tool message (an error
 * when the tool threw, or when the SDK refused to run it after all, e.g. its
 * input no longer valid). A denied call has none: its decision says it.
 */
export function resumedResults(answers: readonly ApprovalAnswer[], executed: ToolModelMessage | undefined): ResumedResult[] {
  if (executed === undefined) return [];
  return answers.flatMap((answer) => {
    if (!answer.approved) return [];
    const part = executed.content.find((content) => content.type === 'tool-result' && content.toolCallId === answer.toolCallId);
    if (part?.type !== 'tool-result') return [];
    const { toolCallId, toolName, roundIndex, sequenceIndex } = answer;
    return [{ toolCallId, toolName, roundIndex, sequenceIndex, result: fromModelOutput(part.output) }];
  });
}
