import fc from 'fast-check';
import type { ModelResponseReceived, ToolEvent } from '@toolhistory/contract';
import { parseReplayPolicy } from './parse-replay-policy';

/**
 * Arbitraries shared by the property tests over traces: well-formed runs
 * as a producer would publish them, delivered as Kafka may deliver them,
 * and replay policies.
 */
export const T0 = Date.parse('2026-03-01T12:00:00.000Z');
const scope = { schemaVersion: 2, tenantId: 'acme', conversationId: 'c1', channel: 'web' };
let ids = 0;
const uuid = () => `00000000-0000-4000-8000-${(ids++).toString(16).padStart(12, '0')}`;

export const runShape = fc.record({
  rounds: fc.array(fc.integer({ min: 1, max: 3 }), { minLength: 1, maxLength: 4 }),
  ending: fc.constantFrom('stop', 'tool_limit', 'failed', 'none'),
  emptyIds: fc.boolean(),
  /** The second call of each round (tool_1) answers with an error. */
  errors: fc.boolean(),
  /**
   * The first call of the run's last round (tool_0): answered as usual, cut
   * off before its result, or paused for a person's approval (still
   * pending; decided in the next run, which then records the result of an
   * approved call; denied within the run).
   */
  lastCall: fc.constantFrom('answered', 'answered', 'cut_off', 'pending', 'approved_later', 'denied_later', 'denied_here'),
});

type RunShape = { rounds: number[]; ending: string; emptyIds: boolean; errors: boolean; lastCall?: string };

/** The model's response published before a round's calls (reasoning models), made from the round's place and its call ids. */
export type ResponseOf = (at: {
  runIndex: number;
  roundIndex: number;
  callIds: readonly string[];
}) => Omit<ModelResponseReceived, keyof typeof scope | 'runId' | 'eventId' | 'type' | 'occurredAt' | 'roundIndex'>;

/**
 * A conversation of well-formed runs, in the order a producer would publish
 * them. With `responseOf`, each round starts with the model's response and
 * every run names the user message of its turn: a new one after a run that
 * answered (`stop`), the same one while a turn goes on (a resumed or a
 * failed run continues it).
 */
export function traceOf(runs: fc.Arbitrary<RunShape[]>, responseOf?: ResponseOf) {
  return runs.map((shapes) => {
    const events: ToolEvent[] = [];
    let t = T0;
    const next = () => new Date((t += 1_000)).toISOString();
    /** What the next run publishes first for a call the previous run left to a person. */
    let resumes: (envelope: typeof scope & { runId: string }) => ToolEvent[] = () => [];
    let turn = 0;
    shapes.forEach((shape, r) => {
      const envelope = { ...scope, runId: `run-${r}`, ...(responseOf ? { userMessageId: `user-${turn}` } : {}) };
      if (shape.ending === 'stop') turn += 1;
      events.push(...resumes(envelope));
      resumes = () => [];
      const lastRound = shape.rounds.length - 1;
      // Approvals name the call by its id: an empty one cannot wait for a person.
      const lastCall = shape.emptyIds && shape.lastCall !== 'cut_off' ? 'answered' : (shape.lastCall ?? 'answered');
      shape.rounds.forEach((calls, roundIndex) => {
        const callIds = Array.from({ length: calls }, (_, s) => (shape.emptyIds ? '' : `call_${r}_${roundIndex}_${s}`));
        const paused = roundIndex === lastRound && lastCall !== 'answered';
        if (responseOf)
          events.push({
            ...envelope,
            eventId: uuid(),
            type: 'ModelResponseReceived',
            occurredAt: next(),
            roundIndex,
            ...responseOf({ runIndex: r, roundIndex, callIds }),
          });
        callIds.forEach((toolCallId, sequenceIndex) =>
          events.push({
            ...envelope,
            eventId: uuid(),
            type: 'ToolCallRequested',
            occurredAt: next(),
            roundIndex,
            sequenceIndex,
            toolCallId,
            toolName: `tool_${sequenceIndex}`,
            arguments: { q: roundIndex },
          }),
        );
        const keys = { roundIndex, sequenceIndex: 0, toolCallId: callIds[0] };
        const result = (e: typeof envelope, sequenceIndex: number, toolCallId: string): ToolEvent => ({
          ...e,
          eventId: uuid(),
          type: 'ToolResultReceived',
          occurredAt: next(),
          roundIndex,
          sequenceIndex,
          toolCallId,
          result: { n: sequenceIndex },
          isError: shape.errors && sequenceIndex === 1,
        });
        if (paused && lastCall !== 'cut_off')
          events.push({ ...envelope, eventId: uuid(), type: 'ToolApprovalRequested', occurredAt: next(), ...keys, reason: 'check' });
        if (paused && lastCall === 'denied_here')
          events.push({ ...envelope, eventId: uuid(), type: 'ToolApprovalDecided', occurredAt: next(), ...keys, approved: false });
        if (paused && (lastCall === 'approved_later' || lastCall === 'denied_later')) {
          const approved = lastCall === 'approved_later';
          resumes = (later) => [
            { ...later, eventId: uuid(), type: 'ToolApprovalDecided', occurredAt: next(), ...keys, approved },
            ...(approved ? [result(later, 0, keys.toolCallId)] : []),
          ];
        }
        callIds.forEach((toolCallId, sequenceIndex) => {
          if (!(paused && sequenceIndex === 0)) events.push(result(envelope, sequenceIndex, toolCallId));
        });
      });
      if (shape.ending === 'failed')
        events.push({ ...envelope, eventId: uuid(), type: 'RunFailed', occurredAt: next(), error: { code: 'x', message: 'y' } });
      else if (shape.ending !== 'none')
        events.push({
          ...envelope,
          eventId: uuid(),
          type: 'RunCompleted',
          occurredAt: next(),
          assistantMessageId: `msg-${r}`,
          finishReason: shape.ending,
        });
    });
    return events;
  });
}

/** Delivery as Kafka and producers may make it: repeated and cut short, and (when `reorder`) reordered. */
export function deliveries(reorder: boolean, responseOf?: ResponseOf) {
  return traceOf(fc.array(runShape, { minLength: 1, maxLength: 4 }), responseOf).chain((events) =>
    fc
      .tuple(
        fc.shuffledSubarray(events, { minLength: events.length, maxLength: events.length }),
        fc.array(fc.nat({ max: events.length - 1 }), { maxLength: 5 }),
        fc.nat({ max: events.length }),
        fc.array(fc.nat({ max: events.length }), { maxLength: 4 }),
        fc.boolean(),
      )
      .map(([shuffled, repeats, cut, batchCuts, keepOrder]) => {
        const ordered = keepOrder || !reorder ? events : shuffled;
        const withRepeats = [...ordered];
        // A redelivered event comes again after itself (Kafka redelivers from an offset); reordered, anywhere.
        for (const i of repeats) withRepeats.splice(reorder ? i : withRepeats.indexOf(ordered[i]) + 1, 0, ordered[i]);
        return { events: withRepeats.slice(0, cut), batchCuts };
      }),
  );
}

/** Any delivery: what every rule must survive. */
export const delivered = deliveries(true);

/**
 * A conversation's events in the order they were published, as Kafka keeps
 * them (one partition per conversation): what pairing a later run's
 * decision or result with an earlier run's call relies on.
 */
export const deliveredInOrder = deliveries(false);

/** Causal invalidation on the traces' arguments ({q: round}): none, tool_1 invalidates tool_0, or tool_0 its own earlier results. */
const INVALIDATION_RULES = {
  none: {},
  other: { tool_1: { invalidates: [{ tool: 'tool_0', match: { '$.q': '$.q' } }] } },
  self: { tool_0: { invalidates: [{ tool: 'tool_0', match: { '$.q': '$.q' } }] } },
};

export const policies = fc
  .record({
    visibility: fc.constantFrom('per_run', 'per_service_call'),
    freshnessSeconds: fc.constantFrom(5, 60, 300, 100_000),
    staleResults: fc.constantFrom('drop', 'placeholder'),
    invalidation: fc.constantFrom('none', 'other', 'self'),
    /** tool_0 changes the world: its calls are never silently dropped. */
    sideEffects: fc.boolean(),
    // A round of the traces takes about 6 to 30 test tokens.
    maxHistoryTokens: fc.option(fc.integer({ min: 0, max: 150 }), { nil: undefined }),
  })
  .map(({ invalidation, sideEffects, maxHistoryTokens, ...rest }) => {
    const channel = maxHistoryTokens === undefined ? rest : { ...rest, maxHistoryTokens };
    const tools: Record<string, Record<string, unknown>> = { ...INVALIDATION_RULES[invalidation as keyof typeof INVALIDATION_RULES] };
    if (sideEffects) tools.tool_0 = { ...tools.tool_0, sideEffects: true };
    const parsed = parseReplayPolicy({ channels: { web: channel }, tools });
    if (!parsed.ok) throw new Error(parsed.problems.join());
    return parsed.policy;
  });
