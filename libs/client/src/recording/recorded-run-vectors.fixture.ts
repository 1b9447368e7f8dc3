import type { MaxResultChars } from '../payload-truncation';
import { prepareEvents } from '../prepare-events';
import { type PublishedEvent, RunPublisher, type RunScope } from '../run-publisher';
import type { JsonObject, JsonValue, RunFailureDetail, TokenUsage } from '../tool-event-types';
import { decisionOn, type ResponseReasoning, resultOf } from './recorded-run';
import { type KnownPendingApproval, resumedCallPosition } from './resumed-calls';
import { RunRecording, type RunRecordingOptions } from './run-recording';

/*
 * Replays the shared trace vectors (libs/contract/test-vectors/recorded-runs.json)
 * through the recording core: each run's steps, framework-neutral, and the
 * exact JSON of the events they publish. The Python package replays the
 * same file through its own core (clients/python/tests/unit/test_recorded_runs.py).
 */

/** One step of a run, as the vectors write it (`at`: when it happened; `refused`: the broker refuses what it publishes). */
export type TraceStep = { at?: string; refused?: boolean } & (
  | {
      step: 'modelResponse';
      calls?: Array<{ toolCallId: string; toolName: string; arguments: JsonObject }>;
      usage?: TokenUsage;
      text?: string;
      messageId?: string;
      reasoning?: ResponseReasoning;
    }
  | { step: 'toolResult'; toolCallId: string; result: JsonValue; isError?: boolean }
  | { step: 'approvalRequested'; toolCallId: string; reason?: string }
  | { step: 'resumedCall'; toolCallId: string; toolName: string; pendingApprovals: KnownPendingApproval[] }
  | { step: 'approvalDecided'; toolCallId: string; approved: boolean; reason?: string; decidedBy?: string }
  | { step: 'complete'; assistantMessageId?: string; finishReason?: string; stoppedForApproval?: boolean }
  | { step: 'fail'; error: RunFailureDetail }
);

export interface TraceRun {
  scope: RunScope;
  steps: TraceStep[];
  /** The JSON of each event published, in order, byte for byte. */
  events: string[];
}

export interface TraceVector {
  description: string;
  /** The recording's options (those a JSON file can state). */
  options?: Pick<
    RunRecordingOptions,
    | 'afterFailedStep'
    | 'firstRoundIndex'
    | 'decidedBy'
    | 'citedSourcesFromAnswer'
    | 'finishReason'
    | 'finishReasonAfterTools'
    | 'finishReasonAwaitingApproval'
  >;
  limits: { maxEventBytes: number; maxResultChars?: MaxResultChars };
  /** When the events without their own `at` happened. */
  now: string;
  runs: TraceRun[];
}

/** What the broker says when a step is `refused`. */
export const REFUSAL = 'refused by the broker';

/** The JSON of the events a run's steps publish, through a RunRecording over a RunPublisher that prepares them as the publisher does. */
export async function replayTraceRun(vector: TraceVector, run: Pick<TraceRun, 'scope' | 'steps'>): Promise<string[]> {
  const events: string[] = [];
  let refusing = false;
  const publisher = new RunPublisher(run.scope, async (batch): Promise<PublishedEvent[]> => {
    if (refusing) throw new Error(REFUSAL);
    return prepareEvents(run.scope, batch, vector.limits, new Date(vector.now)).map(({ eventId, type, value }) => {
      events.push(value);
      return { eventId, type, partition: 0, offset: String(events.length - 1), consistencyToken: '' };
    });
  });
  const recording = new RunRecording(publisher, vector.options);
  for (const step of run.steps) {
    refusing = step.refused === true;
    // A refused step rejects its own promise; what follows it is the policy's business, which the vector shows.
    await perform(recording, step).catch(() => undefined);
    refusing = false;
  }
  return events;
}

function perform(recording: RunRecording, step: TraceStep): Promise<unknown> {
  const at = step.at === undefined ? {} : { occurredAt: step.at };
  switch (step.step) {
    case 'modelResponse': {
      const round = recording.response({
        calls: step.calls,
        usage: step.usage,
        text: step.text,
        messageId: step.messageId,
        reasoning: step.reasoning,
        ...at,
      });
      return round === undefined ? Promise.resolve() : recording.publishCalls(round.calls.map((call) => ({ ...call, ...at })));
    }
    case 'toolResult': {
      const call = recording.calls.open(step.toolCallId);
      if (call === undefined) throw new Error(`no open call ${step.toolCallId}`);
      recording.calls.answer(call);
      return recording.publishResult({ ...resultOf(call, { result: step.result, isError: step.isError ?? false }), ...at });
    }
    case 'approvalRequested':
      return recording.publishApprovalRequest({ ...recording.calls.latest(step.toolCallId)!, ...at }, step.reason) ?? Promise.resolve();
    case 'resumedCall': {
      const { position } = resumedCallPosition(step.toolCallId, { pendingApprovals: step.pendingApprovals })!;
      recording.calls.addEarlier({ ...position, toolCallId: step.toolCallId, toolName: step.toolName, arguments: {} });
      return Promise.resolve();
    }
    case 'approvalDecided': {
      const decision = decisionOn(recording.calls.latest(step.toolCallId)!, step);
      return recording.publishDecision({ ...decision, decidedBy: step.decidedBy, ...at }) ?? Promise.resolve();
    }
    case 'complete': {
      const { assistantMessageId, finishReason, stoppedForApproval } = step;
      return recording.complete({ assistantMessageId, finishReason, stoppedForApproval, ...at });
    }
    case 'fail':
      return recording.fail({ error: step.error, ...at });
  }
}
