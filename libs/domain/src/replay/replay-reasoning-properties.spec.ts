import fc from 'fast-check';
import type { JsonObject, ModelResponseReceived, ToolEvent } from '@toolhistory/contract';
import { redactToolEvent } from '../redaction/redact-event';
import { DEFAULT_REDACTION_POLICY } from '../redaction/redaction-policy';
import { FORMAT_PROBLEMS } from './format-problems.fixture';
import type { ReplayedRound } from './replay-history';
import { HistoryFormat } from './replay-history';
import { REASONING_BY_FORMAT } from './reasoning-conversation.fixture';
import { policyOf, replayOf } from './replay-test-support.fixture';
import { deliveries, ResponseOf, T0 } from './replay-trace-arbitraries.fixture';

type ReasoningFormat = keyof typeof REASONING_BY_FORMAT;
const RECORDING_FORMATS = Object.keys(REASONING_BY_FORMAT) as ReasoningFormat[];
const FORMATS = Object.keys(FORMAT_PROBLEMS) as HistoryFormat[];

/** Each round's response as the provider behind `format` records it; unique per run and round, so a leak can be searched for. */
const responsesThrough =
  (format: ReasoningFormat): ResponseOf =>
  ({ runIndex, roundIndex, callIds }) => {
    const recorded = REASONING_BY_FORMAT[format];
    const named = callIds.every((id) => id !== '');
    return {
      provider: recorded.provider,
      model: recorded.model,
      text: `Round ${runIndex}.${roundIndex} first.`,
      reasoning: recorded.reasoning(runIndex * 10 + roundIndex + 100),
      ...(named && recorded.callSignatures ? { callSignatures: recorded.callSignatures(callIds) } : {}),
      ...(named && recorded.callItemIds ? { callItemIds: recorded.callItemIds(callIds) } : {}),
    };
  };

/** A conversation of a reasoning model, recorded through one provider, delivered in order (repeated, cut short, in batches). */
const recordedTrace = fc
  .constantFrom(...RECORDING_FORMATS)
  .chain((recordedIn) => deliveries(false, responsesThrough(recordedIn)).map((delivery) => ({ recordedIn, ...delivery })));

const replayRequest = fc.record({
  /** Half the time the recording provider's format, the interesting case; else any. */
  format: fc.option(fc.constantFrom(...FORMATS), { nil: undefined }),
  model: fc.constantFrom<'none' | 'same' | 'other'>('none', 'same', 'other'),
  keep: fc.constantFrom('turn', 'always', 'never'),
  visibility: fc.constantFrom('per_run', 'per_service_call'),
});

const responseKey = (runId: string, roundIndex: number) => `${runId}/${roundIndex}`;

/** The rule restated over the delivered events: a turn's reasoning rests until the turn answers or a later turn's response arrives. */
function restingTurn(events: readonly ToolEvent[]): string | undefined {
  const responses = events.filter((e) => e.type === 'ModelResponseReceived');
  const last = responses.at(-1)?.userMessageId;
  const answered = events.some((e) => e.type === 'RunCompleted' && e.finishReason === 'stop' && e.userMessageId === last);
  return answered ? undefined : last;
}

/** Where a round's assistant content starts, for the formats that put reasoning first in it. */
function assistantContentOf(format: HistoryFormat, messages: readonly unknown[], at: number): unknown[] {
  const message = messages[at * 2] as { content?: unknown[]; parts?: unknown[] };
  return (format === 'gemini' ? message.parts : message.content) ?? [];
}

/** The items right before a round's first function_call in a Responses replay (its text message skipped). */
function itemsBeforeCalls(items: readonly unknown[], round: ReplayedRound): unknown[] {
  const first = items.findIndex(
    (i) =>
      (i as { type: string; call_id?: string }).type === 'function_call' &&
      (i as { call_id: string }).call_id === round.calls[0].toolCallId,
  );
  const before = items.slice(0, first).filter((i) => (i as { type: string }).type !== 'message');
  let start = before.length;
  while (start > 0 && (before[start - 1] as { type: string }).type === 'reasoning') start -= 1;
  return before.slice(start);
}

describe('replay of a reasoning model (any trace recorded through one provider, any replay)', () => {
  it('carries each resting round reasoning byte for byte where its API wants it, to its own provider and model only; none anywhere else', () => {
    let carried = 0;
    fc.assert(
      fc.property(recordedTrace, replayRequest, ({ recordedIn, events, batchCuts }, req) => {
        const recorded = REASONING_BY_FORMAT[recordedIn];
        const format = req.format ?? recordedIn;
        const policy = policyOf({ defaults: { visibility: req.visibility, freshnessSeconds: 100_000, reasoning: { keep: req.keep } } });
        const model = req.model === 'none' ? undefined : req.model === 'same' ? recorded.model : 'another-model';
        const history = replayOf(events, { format: format, asOf: T0 + 3_600_000, ...(model ? { model } : {}) }, policy, batchCuts);
        const published = new Map<string, ModelResponseReceived>();
        for (const e of events) if (e.type === 'ModelResponseReceived') published.set(responseKey(e.runId, e.roundIndex), e);
        const resting = restingTurn(events);
        // Each format has its own provider: the reasoning goes back only in the format it was recorded for.
        const toProvider = format === recordedIn && req.model !== 'other';
        for (const turn of history.turns) {
          expect(FORMAT_PROBLEMS[format](turn.messages)).toEqual([]);
          const text = JSON.stringify(turn.messages);
          turn.rounds.forEach((round, at) => {
            const response = published.get(responseKey(round.resumedFromRunId ?? turn.runId, round.roundIndex));
            if (response === undefined) return expect(round.response).toBeUndefined();
            const rests = req.keep === 'always' || (req.keep === 'turn' && response.userMessageId === resting);
            if (!(toProvider && rests)) {
              expect(round.response?.reasoning).toBeUndefined();
              expect(round.response?.reasoningOmitted).not.toBe('none');
              return expect(text).not.toContain(JSON.stringify(response.reasoning![0]));
            }
            carried += 1;
            expect(JSON.stringify(round.response?.reasoning)).toBe(JSON.stringify(response.reasoning));
            const reasoning = JSON.stringify(response.reasoning);
            if (format === 'openai_responses') {
              expect(JSON.stringify(itemsBeforeCalls(turn.messages, round))).toBe(reasoning);
              for (const call of round.calls) {
                const item = turn.messages.find(
                  (i) =>
                    (i as { type: string; call_id?: string }).type === 'function_call' &&
                    (i as { call_id: string }).call_id === call.toolCallId,
                );
                expect((item as { id?: string }).id).toBe(response.callItemIds?.[call.toolCallId]);
              }
            } else {
              const content = assistantContentOf(format, turn.messages, at);
              expect(JSON.stringify(content.slice(0, response.reasoning!.length))).toBe(reasoning);
            }
            if (format === 'gemini' && response.callSignatures !== undefined) {
              const firstCall = assistantContentOf('gemini', turn.messages, at).find((p) => (p as { functionCall?: unknown }).functionCall);
              expect((firstCall as { thoughtSignature?: string }).thoughtSignature).toBe(
                response.callSignatures[round.calls[0].toolCallId],
              );
            }
          });
        }
      }),
      { numRuns: 400 },
    );
    // The traces reach the interesting case, reasoning replayed (in about a tenth of the runs; none in 400 would be a broken generator).
    expect(carried).toBeGreaterThan(0);
  });

  it('leaves the reasoning bytes, signatures and item ids of a response as published when it redacts its text', () => {
    const secrets = fc.constantFrom('jane.doe@example.com', '4111 1111 1111 1111', '+1 415 555 0100', 'sk-live-0123456789abcdefghij');
    fc.assert(
      fc.property(fc.constantFrom(...RECORDING_FORMATS), secrets, fc.string(), (format, secret, noise) => {
        const recorded = REASONING_BY_FORMAT[format];
        const reasoning = recorded.reasoning(1).map((item): JsonObject => ({ ...item, note: `${noise} ${secret}` }));
        const event: ModelResponseReceived = {
          ...responseEnvelope,
          provider: recorded.provider,
          model: recorded.model,
          text: `Writing to ${secret}.`,
          reasoning,
          callSignatures: { call_a: `sig ${secret}` },
          callItemIds: { call_a: `fc_${noise}` },
        };
        const redacted = redactToolEvent(event, DEFAULT_REDACTION_POLICY, null) as ModelResponseReceived;
        expect(redacted.text).not.toContain(secret);
        expect(JSON.stringify([redacted.reasoning, redacted.callSignatures, redacted.callItemIds])).toBe(
          JSON.stringify([event.reasoning, event.callSignatures, event.callItemIds]),
        );
      }),
      { numRuns: 200 },
    );
  });
});

const responseEnvelope = {
  schemaVersion: 2,
  eventId: '00000000-0000-4000-8000-00000000a001',
  type: 'ModelResponseReceived' as const,
  tenantId: 'acme',
  conversationId: 'c1',
  channel: 'web',
  runId: 'r1',
  roundIndex: 0,
  occurredAt: new Date(T0).toISOString(),
};
