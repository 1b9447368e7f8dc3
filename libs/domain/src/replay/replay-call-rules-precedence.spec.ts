import { runFailed, toolCall } from '../../../../test/support/tool-event-factory';
import {
  awaitingApprovalRule,
  CALL_RULES,
  CallRule,
  deniedRule,
  interruptedRule,
  invalidatedRule,
  orphanCallRule,
  orphanResultRule,
  policySkippedRule,
  runFailedRule,
  runIncompleteRule,
  offBranchRule,
  staleRule,
  trailingUnsentRule,
  verdictOf,
} from './replay-call-rules';
import { inRun, iso, policyOf, replayOf } from './replay-test-support.fixture';
import {
  type Case,
  callWith,
  COMPLETED_AT,
  KEPT,
  omitted,
  CANCEL,
  INVALIDATED_NOTICE,
  DENIED,
  INTERRUPTED,
  DENIED_ROW,
} from './replay-call-rules.fixture';

describe('CALL_RULES, applied in order (the first verdict that is not kept stands)', () => {
  it('holds every rule once, in the documented precedence', () => {
    expect(CALL_RULES).toEqual([
      offBranchRule,
      awaitingApprovalRule,
      runFailedRule,
      runIncompleteRule,
      orphanResultRule,
      orphanCallRule,
      trailingUnsentRule,
      policySkippedRule,
      deniedRule,
      interruptedRule,
      invalidatedRule,
      staleRule,
    ]);
  });

  it.each<Case>([
    { name: 'nothing wrong: kept', call: callWith(), verdict: KEPT },
    {
      name: 'per_run: an orphan call in a failed run',
      call: callWith({ runStatus: 'failed', hasResult: false }),
      verdict: omitted('run_failed'),
    },
    {
      name: 'per_run: an orphan result in a running run',
      call: callWith({ runStatus: 'running', hasCall: false }),
      verdict: omitted('run_incomplete'),
    },
    {
      name: 'per_service_call: an orphan call in a failed run',
      call: callWith({ visibility: 'per_service_call', runStatus: 'failed', hasResult: false }),
      verdict: omitted('orphan_call'),
    },
    {
      name: 'per_service_call: an orphan result in a running run',
      call: callWith({ visibility: 'per_service_call', runStatus: 'running', hasCall: false }),
      verdict: omitted('orphan_result'),
    },
    { name: 'a late orphan call', call: callWith({ late: true, hasResult: false }), verdict: omitted('orphan_call') },
    {
      name: 'an unsent round of a tool the policy skips',
      call: callWith({ inUnsentLastRound: true, persistToday: 'none' }),
      verdict: omitted('trailing_unsent'),
    },
    {
      name: 'a skipped tool whose result was invalidated',
      call: callWith({ persistToday: 'none', invalidation: CANCEL }),
      verdict: omitted('policy_skipped'),
    },
    {
      name: 'per_run: a side-effect call cut off in a failed run: the interrupted notice',
      call: callWith({ runStatus: 'failed', hasResult: false, sideEffects: true }),
      verdict: INTERRUPTED,
    },
    {
      name: 'a side-effect call whose real result expired: freshness applies',
      call: callWith({ sideEffects: true, freshnessWindowSeconds: 1 }),
      verdict: omitted('stale'),
    },
    {
      name: 'the interrupted notice never expires',
      call: callWith({ sideEffects: true, hasResult: false, freshnessWindowSeconds: 0, asOf: COMPLETED_AT + 10_000_000 }),
      verdict: INTERRUPTED,
    },
    {
      name: 'a side-effect tool the policy skips stays skipped',
      call: callWith({ sideEffects: true, hasResult: false, persistToday: 'none' }),
      verdict: omitted('policy_skipped'),
    },
    {
      name: 'a denied call in an unsent last round of a completed run: the denial',
      call: callWith({ approval: 'denied', hasResult: false, inUnsentLastRound: true, row: DENIED_ROW }),
      verdict: DENIED,
    },
    {
      name: 'per_run: approved in a later run still going, its call in a failed run: awaiting its result (seed -63947396)',
      call: callWith({ runStatus: 'failed', approval: 'approved', hasResult: false, settled: false, sideEffects: true }),
      verdict: omitted('awaiting_result'),
    },
    {
      name: 'pending in a failed run: awaiting approval, not run_failed',
      call: callWith({ approval: 'pending', hasResult: false, runStatus: 'failed' }),
      verdict: omitted('awaiting_approval'),
    },
    {
      name: 'expired and invalidated, placeholder: the invalidated notice',
      call: callWith({ invalidation: CANCEL, staleResults: 'placeholder', freshnessWindowSeconds: 1 }),
      verdict: { kind: 'notice', notice: INVALIDATED_NOTICE, expired: true, invalidatedBy: 'call_cancel' },
    },
    {
      name: 'off the branch and pending: off the branch (not listed as a pending approval)',
      call: callWith({ offBranch: true, approval: 'pending', hasResult: false }),
      verdict: omitted('off_branch'),
    },
    {
      name: 'off the branch and stale: off the branch',
      call: callWith({ offBranch: true, freshnessWindowSeconds: 1 }),
      verdict: omitted('off_branch'),
    },
  ])('$name', ({ call, verdict }) => {
    expect(verdictOf(call)).toStrictEqual(verdict);
  });

  it('takes any rule list: the first verdict that is not kept wins, none is kept', () => {
    const keep: CallRule = () => KEPT;
    const first: CallRule = () => omitted('stale');
    const second: CallRule = () => omitted('orphan_call');
    expect(verdictOf(callWith(), [keep, first, second])).toEqual(omitted('stale'));
    expect(verdictOf(callWith(), [keep])).toEqual(KEPT);
    expect(verdictOf(callWith(), [])).toEqual(KEPT);
  });

  it('through replayHistory: an unanswered call of a failed run is run_failed under per_run, orphan_call per service call', () => {
    const events = [
      toolCall(inRun('r1'), { roundIndex: 0, sequenceIndex: 0, toolCallId: 'call_a', occurredAt: iso(0) }),
      runFailed(inRun('r1'), { occurredAt: iso(2) }),
    ];
    expect(replayOf(events).omitted.map((o) => o.reason)).toEqual(['run_failed']);
    const perServiceCall = policyOf({ channels: { web: { visibility: 'per_service_call' } } });
    expect(replayOf(events, {}, perServiceCall).omitted.map((o) => o.reason)).toEqual(['orphan_call']);
  });
});
