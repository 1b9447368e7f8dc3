import type { ToolEvent } from '@toolhistory/contract';
import { runCompleted, toolCall, toolResult } from '../../../../test/support/tool-event-factory';
import { inRun as run, iso } from './replay-test-support.fixture';

/** A run with one round of one call (lookup_order) answered, then RunCompleted at +3 s. */
export function simpleRun(
  runId: string,
  start: number,
  fields: { finishReason?: string; toolName?: string; result?: string } = {},
): ToolEvent[] {
  return [
    toolCall(run(runId), {
      roundIndex: 0,
      sequenceIndex: 0,
      toolCallId: `call_${runId}`,
      toolName: fields.toolName ?? 'lookup_order',
      occurredAt: iso(start),
    }),
    toolResult(run(runId), {
      roundIndex: 0,
      sequenceIndex: 0,
      toolCallId: `call_${runId}`,
      result: fields.result ?? 'shipped',
      occurredAt: iso(start + 1),
    }),
    runCompleted(run(runId), {
      finishReason: fields.finishReason ?? 'stop',
      assistantMessageId: `msg_${runId}`,
      occurredAt: iso(start + 3),
    }),
  ];
}
