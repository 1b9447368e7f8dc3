import type { SealedPayload } from '@toolhistory/contract';
import { runCompleted, toolCall, toolResult } from '../../../../test/support/tool-event-factory';
import { payloadExpiredNotice, payloadExpiredRule } from './replay-call-rules';
import { callWith, KEPT, omitted } from './replay-call-rules.fixture';
import { replayValidity } from './replay-validity';
import { inRun, iso, policyOf, readModelOf, replayOf, T0 } from './replay-test-support.fixture';

const sealed = (expiresAt: string | null): SealedPayload => ({ key: 'k1', expiresAt, data: 'AAAA' });

describe('payloads past their retention (docs/adr/033)', () => {
  it('leaves a call out as policy_skipped, or replays it with a notice where placeholders are asked for', () => {
    expect(payloadExpiredRule(callWith())).toEqual(KEPT);
    expect(payloadExpiredRule(callWith({ expiredPayloads: new Set(['result']) }))).toEqual(omitted('policy_skipped'));
    expect(payloadExpiredRule(callWith({ expiredPayloads: new Set(['arguments']), hasResult: false }))).toEqual(omitted('policy_skipped'));
    expect(payloadExpiredRule(callWith({ expiredPayloads: new Set(['arguments']), staleResults: 'placeholder' }))).toEqual({
      kind: 'notice',
      notice: payloadExpiredNotice('get_order'),
      expired: true,
    });
    // A reason alone does not make the call's payload go.
    expect(payloadExpiredRule(callWith({ expiredPayloads: new Set(['approvalRequestReason']) }))).toEqual(KEPT);
  });

  it('judges expiry at as_of, and a cached history stops being valid when a retention ends', () => {
    const events = [
      toolCall(inRun('r1'), { roundIndex: 0, sequenceIndex: 0, toolCallId: 'a', occurredAt: iso(1) }),
      toolResult(inRun('r1'), { roundIndex: 0, sequenceIndex: 0, toolCallId: 'a', occurredAt: iso(2) }),
      runCompleted(inRun('r1'), { assistantMessageId: 'm1', finishReason: 'stop', occurredAt: iso(3) }),
    ].map((e) => (e.type === 'RunCompleted' ? e : { ...e, sealed: sealed(iso(30)) }));
    const policy = policyOf({});
    const before = replayOf(events, { asOf: T0 + 29_000 }, policy);
    expect(before.turns).toHaveLength(1);
    const after = replayOf(events, { asOf: T0 + 30_000 }, policy);
    expect(after.turns).toHaveLength(0);
    expect(after.omitted.map((o) => o.reason)).toEqual(['policy_skipped']);
    const { runs, invocations } = readModelOf(events);
    expect(replayValidity({ asOf: T0 + 10_000, channel: 'web' }, runs, invocations, policy).until).toBe(T0 + 30_000);
  });

  it('projects an event read after its payload expired (a rebuild, a fork copy) as expired at once, with no seal to sweep', () => {
    const call = { ...toolCall(inRun('r1'), { roundIndex: 0, sequenceIndex: 0, toolCallId: 'a', occurredAt: iso(1) }), arguments: {} };
    const { invocations } = readModelOf([{ ...call, sealed: sealed(iso(0)), payloadExpired: true }]);
    expect(invocations[0]).toMatchObject({ expiredPayloads: ['arguments'] });
    expect(invocations[0].payloadSeals ?? null).toBeNull();
  });
});
