import type { ConversationTimeline, InvocationRecord } from '@toolhistory/domain';
import { statusOf } from '@toolhistory/domain';
import type { InvocationView, TimelineRunView } from '@toolhistory/console-api';

/** The console's JSON for a stored invocation (values as stored: redacted). */
export function toInvocationView(record: InvocationRecord): InvocationView {
  return {
    conversationId: record.conversationId,
    runId: record.runId,
    roundIndex: record.roundIndex,
    sequenceIndex: record.sequenceIndex,
    toolCallId: record.toolCallId,
    toolName: record.toolName,
    status: statusOf(record),
    at: record.at,
    requestedAt: record.requestedAt,
    completedAt: record.completedAt,
    durationMs: record.durationMs,
    arguments: record.arguments,
    result: record.completedAt === null ? null : record.result,
    persist: record.persist,
    argumentRedactions: record.argumentRedactions,
    resultRedactions: record.resultRedactions,
    traceId: record.traceId,
  };
}

export function toTimelineRunViews(timeline: ConversationTimeline): TimelineRunView[] {
  return timeline.runs.map((run) => ({
    runId: run.runId,
    status: run.status,
    startedAt: run.startedAt,
    endedAt: run.endedAt,
    finishReason: run.finishReason,
    error: run.error,
    rounds: run.rounds.map((round) => ({
      roundIndex: round.roundIndex,
      calls: round.calls.map((call) => ({ invocation: toInvocationView(call.invocation), replay: call.replay })),
    })),
  }));
}
