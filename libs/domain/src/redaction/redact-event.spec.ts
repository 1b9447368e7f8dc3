import type { ToolCallRequested, ToolResultReceived } from '@toolhistory/contract';
import { runCompleted, runCompletedV1, runFailed, toolCall, toolResult } from '../../../../test/support/tool-event-factory';
import { projectEvents } from '../projection/evolve-read-model';
import { testTokens } from '../projection/test-tokens.fixture';
import { parsePolicyDocument } from '../policy/tool-history-policy';
import { replayHistory } from '../replay/replay-history';
import { DEFAULT_REPLAY_POLICY } from '../replay/replay-policy';
import { redactEarlyResult, redactToolEvent } from './redact-event';
import { DEFAULT_REDACTION_POLICY, RedactionPolicy } from './redaction-policy';

const scope = { tenantId: 't', conversationId: 'c', runId: 'r' };

function policyOf(document: unknown): RedactionPolicy {
  const parsed = parsePolicyDocument(document);
  if (!parsed.ok) throw new Error(parsed.problems.join('\n'));
  return parsed.policy.redaction;
}

const policy = policyOf({
  tools: {
    charge_card: { maskArguments: ['$.card.number', '$.card.cvc'] },
    list_customers: { maskResult: ['$.customers[*].email'], detectors: ['phone'] },
    fetch_page: { maxResultChars: 40 },
    audit_probe: { persist: 'metadata' },
    secret_tool: { persist: 'none' },
  },
});

describe('redactToolEvent', () => {
  it('masks the configured argument paths with typed markers and counts them', () => {
    const call = toolCall(scope, {
      roundIndex: 0,
      sequenceIndex: 0,
      toolName: 'charge_card',
      arguments: { card: { number: '4111 1111 1111 1111', cvc: '123' }, amount: 12 },
    });
    const out = redactToolEvent(call, policy, null) as ToolCallRequested;
    expect(out.arguments).toEqual({ card: { number: '[REDACTED:$.card.number]', cvc: '[REDACTED:$.card.cvc]' }, amount: 12 });
    expect(out.redaction).toEqual({ persist: 'full', counts: { '$.card.number': 1, '$.card.cvc': 1 }, originalBytes: 65 });
  });

  it('runs the default detectors inside strings, JSON held in strings, keys and numbers', () => {
    const call = toolCall(scope, {
      roundIndex: 0,
      sequenceIndex: 0,
      toolName: 'send_mail',
      arguments: {
        body: 'Write to ann.lee@example.org or call +1 415 555 0134',
        raw: '{"auth":"Bearer abcdefghijklmnopqrstuvwx","iban":"DE89 3704 0044 0532 0130 00"}',
        card: 4242424242424242,
        'bob@example.com': { note: 'see https://api.example.com/v1?api_key=AIzaSyA1b2C3d4E5f6G7h8I9j0KlMnOpQrStUvW' },
      },
    });
    const out = redactToolEvent(call, DEFAULT_REDACTION_POLICY, null) as ToolCallRequested;
    const text = JSON.stringify(out.arguments);
    for (const raw of ['ann.lee', '415 555', 'abcdefghijklmnop', 'DE89', '4242424242424242', 'bob@example.com', 'AIzaSy'])
      expect(text).not.toContain(raw);
    expect(out.arguments.body).toBe('Write to [REDACTED:email] or call [REDACTED:phone]');
    expect(out.arguments.card).toBe('[REDACTED:payment_card]');
    expect(out.redaction!.counts).toEqual({ email: 2, phone: 1, secret: 2, iban: 1, payment_card: 1 });
  });

  it('masks result paths with the tool detectors only, and cuts long results with a visible marker', () => {
    const list = toolResult(scope, {
      roundIndex: 0,
      sequenceIndex: 0,
      result: {
        customers: [
          { email: 'a@x.io', phone: '(415) 555-0134' },
          { email: 'b@x.io', ip: '10.1.2.3' },
        ],
      },
    });
    const masked = redactToolEvent(list, policy, 'list_customers') as ToolResultReceived;
    expect(masked.result).toEqual({
      customers: [
        { email: '[REDACTED:$.customers[*].email]', phone: '[REDACTED:phone]' },
        { email: '[REDACTED:$.customers[*].email]', ip: '10.1.2.3' },
      ],
    });
    expect(masked.redaction!.counts).toEqual({ '$.customers[*].email': 2, phone: 1 });

    const page = toolResult(scope, { roundIndex: 0, sequenceIndex: 1, result: 'x'.repeat(4_940) });
    const cut = redactToolEvent(page, policy, 'fetch_page') as ToolResultReceived;
    expect(cut.result).toBe(`${'x'.repeat(40)}…[truncated 4,900 chars]`);
    expect(cut.redaction).toEqual({ persist: 'full', counts: { truncated: 1 }, originalBytes: 4_942 });
  });

  it('keeps sizes but no payload under "metadata", and nothing but the call under "none"', () => {
    const probe = redactToolEvent(
      toolCall(scope, { roundIndex: 0, sequenceIndex: 0, toolName: 'audit_probe', arguments: { q: 'abc' } }),
      policy,
      null,
    );
    expect(probe).toMatchObject({ arguments: {}, redaction: { persist: 'metadata', counts: {}, originalBytes: 11 } });
    const probeResult = redactToolEvent(toolResult(scope, { roundIndex: 0, sequenceIndex: 0, result: [1, 2, 3] }), policy, 'audit_probe');
    expect(probeResult).toMatchObject({ result: null, redaction: { persist: 'metadata', originalBytes: 7 } });

    const hidden = redactToolEvent(
      toolCall(scope, { roundIndex: 0, sequenceIndex: 1, toolName: 'secret_tool', arguments: { q: 'abc' } }),
      policy,
      null,
    );
    expect(hidden).toMatchObject({ arguments: {}, toolName: 'secret_tool', redaction: { persist: 'none', counts: {} } });
    expect(hidden.redaction).not.toHaveProperty('originalBytes');
  });

  it("passes a failed run's error text through the detectors and leaves completions alone", () => {
    const failed = redactToolEvent(
      runFailed(scope, { error: { code: 'auth', message: 'key sk-ant-api03-AbCdEfGhIjKlMnOpQrStUv rejected for ops@example.com' } }),
      policy,
      null,
    );
    expect(failed).toMatchObject({
      error: { code: 'auth', message: 'key [REDACTED:secret] rejected for [REDACTED:email]' },
      redaction: { counts: { secret: 1, email: 1 } },
    });
    const done = runCompleted(scope);
    expect(redactToolEvent(done, policy, null)).toBe(done);
  });

  it('keeps the schema version an event was received in, as it is stored in that version', () => {
    const doneV1 = runCompletedV1(scope);
    expect(redactToolEvent(doneV1, policy, null)).toBe(doneV1);
    const callV1 = toolCall(scope, {
      schemaVersion: 1,
      roundIndex: 0,
      sequenceIndex: 0,
      toolName: 'charge_card',
      arguments: { card: { number: '4111 1111 1111 1111' } },
    });
    expect(redactToolEvent(callV1, policy, null)).toMatchObject({
      schemaVersion: 1,
      arguments: { card: { number: '[REDACTED:$.card.number]' } },
    });
    const resultV1 = toolResult(scope, { schemaVersion: 1, roundIndex: 0, sequenceIndex: 0, result: 'mail ops@example.com' });
    expect(redactToolEvent(resultV1, policy, null)).toMatchObject({ schemaVersion: 1, result: 'mail [REDACTED:email]' });
  });

  it('is idempotent: redacting the redacted event changes nothing and counts nothing new', () => {
    const events = [
      toolCall(scope, {
        roundIndex: 0,
        sequenceIndex: 0,
        toolName: 'charge_card',
        arguments: { card: { number: '5555 5555 5555 4444' }, mail: 'x@y.io' },
      }),
      toolResult(scope, {
        roundIndex: 0,
        sequenceIndex: 0,
        result: { text: 'token eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U' },
      }),
      toolResult(scope, { roundIndex: 0, sequenceIndex: 1, result: 'y'.repeat(100) }),
    ];
    const tools = ['charge_card', 'charge_card', 'fetch_page'];
    events.forEach((event, i) => {
      const once = redactToolEvent(event, policy, tools[i]);
      const { redaction, ...withoutNote } = once as ToolCallRequested;
      const twice = redactToolEvent(withoutNote as ToolCallRequested, policy, tools[i]);
      expect({ ...twice, redaction: undefined }).toEqual({ ...once, redaction: undefined });
      expect(Object.values(twice.redaction!.counts).reduce((a, b) => a + b, 0)).toBe(0);
      expect(redaction).toBeDefined();
    });
  });
});

describe('redactEarlyResult', () => {
  it('applies the tool rule to a result recorded before its call, once', () => {
    const stored = redactToolEvent(
      toolResult(scope, { roundIndex: 0, sequenceIndex: 0, result: { customers: [{ email: 'a@x.io', tier: 'gold' }] } }),
      policy,
      null,
    ) as ToolResultReceived;
    expect(stored.result).toEqual({ customers: [{ email: '[REDACTED:email]', tier: 'gold' }] });

    const rewritten = redactEarlyResult(stored, policy, 'list_customers')!;
    expect(rewritten.result).toEqual({ customers: [{ email: '[REDACTED:$.customers[*].email]', tier: 'gold' }] });
    expect(rewritten.redaction!.counts).toEqual({ email: 1, '$.customers[*].email': 1 });
    expect(rewritten.redaction!.originalBytes).toBe(stored.redaction!.originalBytes);
    expect(redactEarlyResult(rewritten, policy, 'list_customers')).toBeNull();

    expect(redactEarlyResult(stored, policy, 'audit_probe')).toMatchObject({ result: null, redaction: { persist: 'metadata' } });
    expect(redactEarlyResult(stored, policy, 'some_tool_without_rule')).toBeNull();
  });
});

describe('redaction notes in the read model and replay', () => {
  it('keeps counts and sizes per invocation, and never replays a tool whose payload was not kept', () => {
    const r = { ...scope, runId: 'r1' };
    const events = [
      redactToolEvent(
        toolCall(r, { roundIndex: 0, sequenceIndex: 0, toolName: 'charge_card', arguments: { card: { number: '4111111111111111' } } }),
        policy,
        null,
      ),
      redactToolEvent(toolResult(r, { roundIndex: 0, sequenceIndex: 0, result: 'charged ann@x.io' }), policy, 'charge_card'),
      redactToolEvent(toolCall(r, { roundIndex: 0, sequenceIndex: 1, toolName: 'audit_probe', arguments: { q: 1 } }), policy, null),
      redactToolEvent(toolResult(r, { roundIndex: 0, sequenceIndex: 1, result: 'ok' }), policy, 'audit_probe'),
      runCompleted(r),
    ];
    const changes = projectEvents({ conversations: new Map(), runs: new Map(), invocations: new Map() }, events, testTokens);
    const [card, probe] = changes.invocations;
    expect(card).toMatchObject({
      persist: 'full',
      argumentRedactions: { '$.card.number': 1 },
      resultRedactions: { email: 1 },
      argumentsBytes: 38,
      resultBytes: 18,
    });
    expect(probe).toMatchObject({ persist: 'metadata', arguments: {}, result: null, argumentsBytes: 7, resultBytes: 4 });

    const history = replayHistory(
      { tenantId: 't', conversationId: 'c', channel: 'web', asOf: Date.parse(events[4].occurredAt), format: 'openai_chat' },
      changes.runs,
      changes.invocations,
      DEFAULT_REPLAY_POLICY,
      testTokens,
    );
    expect(history.turns[0].rounds[0].calls.map((c) => c.arguments)).toEqual([{ card: { number: '[REDACTED:$.card.number]' } }]);
    expect(history.omitted).toEqual([expect.objectContaining({ toolName: 'audit_probe', reason: 'policy_skipped' })]);
  });
});
