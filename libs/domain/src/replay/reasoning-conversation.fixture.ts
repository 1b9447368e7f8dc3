/**
 * One turn of a reasoning model, recorded through each provider as that
 * provider hands its reasoning back: two parallel calls answered, then a
 * refund that waited for a person and was resumed in a later run of the
 * same turn (still going). Replayed to the provider it came from, every
 * round carries its reasoning; the vendor-type conformance (test/conformance)
 * and the golden placements (round-placement.spec.ts) replay it.
 */
import type { JsonObject, ToolEvent } from '@toolhistory/contract';
import {
  approvalDecided,
  approvalRequested,
  modelResponse,
  runCompleted,
  toolCall,
  toolResult,
} from '../../../../test/support/tool-event-factory';
import type { HistoryFormat, ReplayedTurn } from './replay-history';
import { inRun, iso, policyOf, replayOf, T0 } from './replay-test-support.fixture';

/** What a provider's response in one round carries besides its calls, as its API returns it. */
export interface RecordedReasoning {
  provider: string;
  model: string;
  reasoning: (round: number) => JsonObject[];
  callSignatures?: (callIds: readonly string[]) => Record<string, string>;
  callItemIds?: (callIds: readonly string[]) => Record<string, string>;
}

/** The formats whose API takes reasoning back, and how their provider records it. */
export const REASONING_BY_FORMAT: Record<Exclude<HistoryFormat, 'openai_chat'>, RecordedReasoning> = {
  anthropic_messages: {
    provider: 'anthropic',
    model: 'claude-sonnet-4-5',
    reasoning: (round): JsonObject[] => [
      { type: 'thinking', thinking: `Round ${round}: the order comes first.`, signature: `EqQBCkgIARABGAIiQ${round}` },
      { type: 'redacted_thinking', data: `EmwKAhgBEgy3va3pzix/LafPsn4a${round}` },
    ],
  },
  openai_responses: {
    provider: 'openai',
    model: 'gpt-5',
    reasoning: (round) => [
      {
        type: 'reasoning',
        id: `rs_68a1f0c2d4e8${round}`,
        summary: [{ type: 'summary_text', text: `Round ${round}: look the order up.` }],
        encrypted_content: `gAAAAABoofDC${round}`,
      },
    ],
    callItemIds: (callIds) => Object.fromEntries(callIds.map((id, i) => [id, `fc_68a1f0c2d4e9${i}_${id}`])),
  },
  gemini: {
    provider: 'google',
    model: 'gemini-3-pro-preview',
    reasoning: (round) => [{ text: `Round ${round}: the order first.`, thought: true }],
    // Parallel calls: only the step's first call is signed.
    callSignatures: (callIds) => ({ [callIds[0]]: `CiQB0e2Kb8${callIds[0]}` }),
  },
  bedrock_converse: {
    provider: 'bedrock',
    model: 'anthropic.claude-sonnet-4-5-v1:0',
    reasoning: (round) => [
      { reasoningContent: { reasoningText: { text: `Round ${round}: the order first.`, signature: `EqQBCkgI${round}` } } },
    ],
  },
};

const R1 = { ...inRun('r1'), userMessageId: 'u1' };
const R2 = { ...inRun('r2'), userMessageId: 'u1' };

/** The turn's events with each round's response recorded as `recorded` says. */
export function reasoningConversation(recorded: RecordedReasoning): ToolEvent[] {
  const response = (round: number, callIds: string[], text?: string) =>
    modelResponse(R1, {
      roundIndex: round,
      provider: recorded.provider,
      model: recorded.model,
      text,
      reasoning: recorded.reasoning(round),
      ...(recorded.callSignatures ? { callSignatures: recorded.callSignatures(callIds) } : {}),
      ...(recorded.callItemIds ? { callItemIds: recorded.callItemIds(callIds) } : {}),
      occurredAt: iso(round * 10 + 1),
    });
  return [
    response(0, ['call_order', 'call_note'], 'I will check the order and its notes first.'),
    toolCall(R1, {
      roundIndex: 0,
      sequenceIndex: 0,
      toolCallId: 'call_order',
      toolName: 'get_order',
      arguments: { id: 'A-1' },
      occurredAt: iso(1),
    }),
    toolCall(R1, { roundIndex: 0, sequenceIndex: 1, toolCallId: 'call_note', toolName: 'get_note', arguments: {}, occurredAt: iso(1) }),
    toolResult(R1, { roundIndex: 0, sequenceIndex: 0, toolCallId: 'call_order', result: { status: 'damaged' }, occurredAt: iso(2) }),
    toolResult(R1, { roundIndex: 0, sequenceIndex: 1, toolCallId: 'call_note', result: 'refund approved by phone', occurredAt: iso(2) }),
    response(1, ['call_refund']),
    toolCall(R1, {
      roundIndex: 1,
      sequenceIndex: 0,
      toolCallId: 'call_refund',
      toolName: 'refund',
      arguments: { amount: 30 },
      occurredAt: iso(11),
    }),
    approvalRequested(R1, { roundIndex: 1, sequenceIndex: 0, toolCallId: 'call_refund', occurredAt: iso(11) }),
    runCompleted(R1, { finishReason: 'tool-calls', occurredAt: iso(12) }),
    approvalDecided(R2, { roundIndex: 1, sequenceIndex: 0, toolCallId: 'call_refund', approved: true, occurredAt: iso(20) }),
    toolResult(R2, { roundIndex: 1, sequenceIndex: 0, toolCallId: 'call_refund', result: 'refunded', occurredAt: iso(21) }),
  ];
}

/** Progress shown per service call, so the resumed round replays while its run still goes. */
export const REASONING_POLICY = policyOf({ defaults: { visibility: 'per_service_call' } });

/** The turn's rounds replayed in `format` (to the model that recorded them, unless `model` says another) 30 s after it began. */
export function reasoningTurns(format: HistoryFormat, recorded: RecordedReasoning, model?: string): ReplayedTurn[] {
  return replayOf(
    reasoningConversation(recorded),
    { format, asOf: T0 + 30_000, ...(model === undefined ? {} : { model }) },
    REASONING_POLICY,
  ).turns;
}
