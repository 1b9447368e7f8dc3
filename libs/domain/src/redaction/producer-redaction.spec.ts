import type { PersistChoice, RedactionNote, ToolCallRequested, ToolResultReceived } from '@toolhistory/contract';
import fc from 'fast-check';
import { runCompleted, toolCall, toolResult } from '../../../../test/support/tool-event-factory';
import { parsePolicyDocument } from '../policy/tool-history-policy';
import { projectEvents } from '../projection/evolve-read-model';
import { testTokens } from '../projection/test-tokens.fixture';
import { replayHistory } from '../replay/replay-history';
import { DEFAULT_REPLAY_POLICY } from '../replay/replay-policy';
import { redactDeadLetterValue } from './redact-dead-letter';
import { producerPersist, redactEarlyResult, redactToolEvent, stricterPersist } from './redact-event';
import type { RedactionPolicy } from './redaction-policy';

const scope = { tenantId: 't', conversationId: 'c', runId: 'r' };
const CHOICES: PersistChoice[] = ['full', 'metadata', 'none'];
/** A producer's redaction as published: its choice alone (the recorder adds counts). */
const producerNote = (persist: PersistChoice) => ({ persist }) as RedactionNote;

function policyOf(document: unknown): RedactionPolicy {
  const parsed = parsePolicyDocument(document);
  if (!parsed.ok) throw new Error(parsed.problems.join('\n'));
  return parsed.policy.redaction;
}

/** One policy per persist choice for the tool `lookup`, with a mask so a kept payload is visibly redacted too. */
const policyKeeping = (persist: PersistChoice): RedactionPolicy =>
  policyOf({ tools: { lookup: { persist, maskArguments: ['$.token'], maskResult: ['$.token'] } } });

/** A call or result as a producer whose hook chose `persist` publishes it. */
function producerCall(persist: PersistChoice, args: Record<string, string>, originalBytes?: number): ToolCallRequested {
  const call = toolCall(scope, { roundIndex: 0, sequenceIndex: 0, toolName: 'lookup', arguments: persist === 'full' ? args : {} });
  return { ...call, ...(originalBytes === undefined ? {} : { originalBytes }), producerRedacted: true, redaction: producerNote(persist) };
}

function producerResult(persist: PersistChoice, result: Record<string, string>, originalBytes?: number): ToolResultReceived {
  const event = toolResult(scope, { roundIndex: 0, sequenceIndex: 0, result: persist === 'full' ? result : null });
  return { ...event, ...(originalBytes === undefined ? {} : { originalBytes }), producerRedacted: true, redaction: producerNote(persist) };
}

describe('stricterPersist', () => {
  it.each([
    ['full', 'full', 'full'],
    ['full', 'metadata', 'metadata'],
    ['full', 'none', 'none'],
    ['metadata', 'full', 'metadata'],
    ['metadata', 'metadata', 'metadata'],
    ['metadata', 'none', 'none'],
    ['none', 'full', 'none'],
    ['none', 'metadata', 'none'],
    ['none', 'none', 'none'],
  ] as const)('%s and %s keep %s', (a, b, kept) => expect(stricterPersist(a, b)).toBe(kept));

  it('is commutative, associative, idempotent, and never laxer than either side', () => {
    const choice = fc.constantFrom(...CHOICES);
    fc.assert(
      fc.property(choice, choice, choice, (a, b, c) => {
        expect(stricterPersist(a, b)).toBe(stricterPersist(b, a));
        expect(stricterPersist(stricterPersist(a, b), c)).toBe(stricterPersist(a, stricterPersist(b, c)));
        expect(stricterPersist(a, a)).toBe(a);
        const kept = stricterPersist(a, b);
        expect(CHOICES.indexOf(kept)).toBeGreaterThanOrEqual(Math.max(CHOICES.indexOf(a), CHOICES.indexOf(b)));
      }),
    );
  });
});

describe("redactToolEvent on a producer's redacted payload", () => {
  it("takes the producer's choice only with producerRedacted", () => {
    const unclaimed = { ...toolCall(scope, { roundIndex: 0, sequenceIndex: 0 }), redaction: producerNote('none') };
    expect(producerPersist(unclaimed)).toBe('full');
    expect(producerPersist(producerCall('metadata', {}))).toBe('metadata');
  });

  // The stored persist for each pair of the producer's and the policy's choice, for a call and for a result.
  it.each(CHOICES.flatMap((producer) => CHOICES.map((rule) => [producer, rule] as const)))(
    'producer %s, policy %s: keeps the stricter, with the size when metadata, and keeps producerRedacted',
    (producer, rule) => {
      const kept = stricterPersist(producer, rule);
      const args = { orderId: 'A-1', token: 'tok-123' };
      const withheldSize = (bytes: number) => (producer === 'metadata' ? bytes : undefined);
      const call = redactToolEvent(producerCall(producer, args, withheldSize(50)), policyKeeping(rule), null) as ToolCallRequested;
      const result = redactToolEvent(producerResult(producer, args, withheldSize(60)), policyKeeping(rule), 'lookup') as ToolResultReceived;
      for (const event of [call, result]) {
        expect(event.producerRedacted).toBe(true);
        expect(event.redaction?.persist).toBe(kept);
      }
      const sizeOf = (event: { redaction?: { originalBytes?: number } }) => event.redaction?.originalBytes;
      if (kept === 'full') {
        expect(call.arguments).toEqual({ orderId: 'A-1', token: '[REDACTED:$.token]' });
        expect(result.result).toEqual({ orderId: 'A-1', token: '[REDACTED:$.token]' });
      } else {
        expect(call.arguments).toEqual({});
        expect(result.result).toBeNull();
      }
      if (kept === 'none') {
        expect(sizeOf(call)).toBeUndefined();
        expect(sizeOf(result)).toBeUndefined();
      }
      if (kept === 'metadata') {
        // The producer's size when it withheld the payload; else the size of what it sent.
        const sent = Buffer.byteLength(JSON.stringify(args));
        expect(sizeOf(call)).toBe(producer === 'metadata' ? 50 : sent);
        expect(sizeOf(result)).toBe(producer === 'metadata' ? 60 : sent);
      }
    },
  );

  it('never upgrades a result its producer withheld when its call arrives later', () => {
    for (const producer of ['metadata', 'none'] as const) {
      const stored = redactToolEvent(producerResult(producer, {}, 60), policyKeeping('full'), null) as ToolResultReceived;
      expect(redactEarlyResult(stored, policyKeeping('full'), 'lookup')).toBeNull();
    }
  });

  it('applies the tool rule to an early result its producer redacted but kept', () => {
    const stored = redactToolEvent(producerResult('full', { token: 'tok-1' }), policyKeeping('full'), null) as ToolResultReceived;
    const rewritten = redactEarlyResult(stored, policyKeeping('full'), 'lookup');
    expect(rewritten).toMatchObject({ producerRedacted: true, result: { token: '[REDACTED:$.token]' }, redaction: { persist: 'full' } });
  });

  it('for any payload and any choices, stores nothing of a payload that is not kept fully', () => {
    const payload = fc.dictionary(fc.string({ maxLength: 6 }), fc.string({ maxLength: 12 }), { maxKeys: 4 });
    const choice = fc.constantFrom(...CHOICES);
    fc.assert(
      fc.property(payload, choice, choice, (args, producer, rule) => {
        const call = redactToolEvent(producerCall(producer, args), policyKeeping(rule), null) as ToolCallRequested;
        const result = redactToolEvent(producerResult(producer, args), policyKeeping(rule), 'lookup') as ToolResultReceived;
        const kept = stricterPersist(producer, rule);
        expect(call.redaction?.persist).toBe(kept);
        expect(result.redaction?.persist).toBe(kept);
        if (kept !== 'full') {
          expect(call.arguments).toEqual({});
          expect(result.result).toBeNull();
        }
      }),
    );
  });
});

describe('producer redaction in the read model and replay', () => {
  it('marks the invocation, shows the stricter persist of call and result, and replays only what was kept whole', () => {
    const policy = policyKeeping('full');
    const r = { ...scope, runId: 'r1' };
    const step = (sequenceIndex: number) => ({ roundIndex: 0, sequenceIndex, toolCallId: `call_${sequenceIndex}` });
    const redacted = (event: ToolCallRequested | ToolResultReceived, persist: PersistChoice) =>
      ({ ...event, producerRedacted: true, redaction: producerNote(persist) }) as typeof event;
    const events = [
      // 0: the producer masked a field and kept the rest.
      redacted(toolCall(r, { ...step(0), toolName: 'lookup', arguments: { q: '[hidden]' } }), 'full'),
      redacted(toolResult(r, { ...step(0), result: 'found' }), 'full'),
      // 1: the result first, withheld with its size; then the call, kept.
      redacted({ ...toolResult(r, { ...step(1), result: null }), originalBytes: 321 }, 'metadata'),
      toolCall(r, { ...step(1), toolName: 'lookup', arguments: { q: 'x' } }),
      // 2: nothing kept of either.
      redacted(toolCall(r, { ...step(2), toolName: 'lookup', arguments: {} }), 'none'),
      redacted(toolResult(r, { ...step(2), result: null }), 'none'),
      // 3: no hook ran.
      toolCall(r, { ...step(3), toolName: 'lookup', arguments: { q: 'y' } }),
      toolResult(r, { ...step(3), result: 'plain' }),
      runCompleted(r),
    ].map((event) => redactToolEvent(event, policy, 'lookup'));
    const changes = projectEvents({ conversations: new Map(), runs: new Map(), invocations: new Map() }, events, testTokens);
    const bySequence = [...changes.invocations].sort((a, b) => a.sequenceIndex - b.sequenceIndex);
    expect(bySequence.map((row) => [row.producerRedacted, row.persist])).toEqual([
      [true, 'full'],
      [true, 'metadata'],
      [true, 'none'],
      [false, 'full'],
    ]);
    expect(bySequence[1]).toMatchObject({ result: null, resultBytes: 321 });
    expect(bySequence[2]).toMatchObject({ arguments: {}, result: null, argumentsBytes: null, resultBytes: null });

    const history = replayHistory(
      { tenantId: 't', conversationId: 'c', channel: 'web', asOf: Date.parse(events[8].occurredAt), format: 'openai_chat' },
      changes.runs,
      changes.invocations,
      DEFAULT_REPLAY_POLICY,
      testTokens,
    );
    expect(history.turns[0].rounds[0].calls.map((call) => call.arguments)).toEqual([{ q: '[hidden]' }, { q: 'y' }]);
    expect(history.omitted.map((o) => [o.sequenceIndex, o.reason])).toEqual([
      [1, 'policy_skipped'],
      [2, 'policy_skipped'],
    ]);
  });
});

describe('a poison message its producer redacted', () => {
  it('still passes the policy and the detectors before it rests in the dead-letter topic', () => {
    const poison = { ...producerCall('full', { token: 'tok-1', contact: 'ann@example.com' }), roundIndex: -1 };
    const letter = redactDeadLetterValue(Buffer.from(JSON.stringify(poison)), policyKeeping('full'))!.toString();
    expect(letter).not.toContain('tok-1');
    expect(letter).not.toContain('ann@example.com');
    expect(JSON.parse(letter)).toMatchObject({ producerRedacted: true, redaction: { persist: 'full' } });
  });
});
