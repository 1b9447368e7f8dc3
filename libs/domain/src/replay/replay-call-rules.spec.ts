import type { InvocationRow } from '../projection/read-model.types';
import { runFailed, toolCall } from '../../../../test/support/tool-event-factory';
import {
  awaitingApprovalRule,
  CALL_RULES,
  CallContext,
  CallRule,
  CallVerdict,
  deniedCallNotice,
  deniedRule,
  expiredResultNotice,
  interruptedRule,
  INTERRUPTED_CALL_NOTICE,
  invalidatedResultNotice,
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
import { answeredRow, inRun, iso, policyOf, replayOf, T0 } from './replay-test-support.fixture';

/** An answered get_order call, result recorded at T0 + 1 s. */
const ROW = answeredRow();
const COMPLETED_AT = T0 + 1_000;

/** A call every rule keeps: answered, in a completed run's sent round, fully persisted, fresh (60 s of 300 s). */
function callWith(fields: Partial<Omit<CallContext, 'row'>> & { row?: Partial<InvocationRow> } = {}): CallContext {
  const { row, ...rest } = fields;
  return {
    row: { ...ROW, ...row },
    toolCallId: 'call_get',
    toolName: 'get_order',
    hasCall: true,
    hasResult: true,
    runStatus: 'completed',
    offBranch: false,
    visibility: 'per_run',
    late: false,
    inUnsentLastRound: false,
    persistToday: 'full',
    staleResults: 'drop',
    freshnessWindowSeconds: 300,
    asOf: COMPLETED_AT + 60_000,
    approval: 'none',
    sideEffects: false,
    settled: true,
    ...rest,
  };
}

interface Case {
  name: string;
  call: CallContext;
  verdict: CallVerdict;
}

const KEPT: CallVerdict = { kind: 'kept' };
const omitted = (reason: Extract<CallVerdict, { kind: 'omitted' }>['reason']): CallVerdict => ({ kind: 'omitted', reason });
const CANCEL = { toolName: 'cancel_order', toolCallId: 'call_cancel' };
const INVALIDATED_NOTICE = invalidatedResultNotice('get_order', 'cancel_order', 'call_cancel');

const DENIED_NOTICE = deniedCallNotice('get_order', 'over the limit');
const DENIED: CallVerdict = { kind: 'notice', notice: DENIED_NOTICE, expired: false, isError: true };
const INTERRUPTED: CallVerdict = { kind: 'notice', notice: INTERRUPTED_CALL_NOTICE, expired: false, isError: true, interrupted: true };
const DENIED_ROW = { approvalDecisionReason: 'over the limit' };

const TABLES: Array<[CallRule, Case[]]> = [
  [
    offBranchRule,
    [
      { name: "a run of the host's branch", call: callWith(), verdict: KEPT },
      { name: 'a run off the branch (its answer regenerated)', call: callWith({ offBranch: true }), verdict: omitted('off_branch') },
      {
        name: 'off the branch, whatever else holds of it (a call waiting for approval)',
        call: callWith({ offBranch: true, approval: 'pending', hasResult: false }),
        verdict: omitted('off_branch'),
      },
    ],
  ],
  [
    awaitingApprovalRule,
    [
      {
        name: 'a call waiting for a decision',
        call: callWith({ approval: 'pending', hasResult: false }),
        verdict: omitted('awaiting_approval'),
      },
      {
        name: 'waiting, whatever its run did (failed)',
        call: callWith({ approval: 'pending', hasResult: false, runStatus: 'failed' }),
        verdict: omitted('awaiting_approval'),
      },
      { name: 'approved', call: callWith({ approval: 'approved' }), verdict: KEPT },
      { name: 'denied', call: callWith({ approval: 'denied', hasResult: false }), verdict: KEPT },
      { name: 'no approval asked', call: callWith(), verdict: KEPT },
      { name: 'a decision without its call is not its concern', call: callWith({ approval: 'pending', hasCall: false }), verdict: KEPT },
    ],
  ],
  [
    runFailedRule,
    [
      { name: 'per_run: a failed run shows nothing', call: callWith({ runStatus: 'failed' }), verdict: omitted('run_failed') },
      { name: 'per_run: but a denied call', call: callWith({ runStatus: 'failed', approval: 'denied', hasResult: false }), verdict: KEPT },
      { name: 'per_run: but an approved and answered call', call: callWith({ runStatus: 'failed', approval: 'approved' }), verdict: KEPT },
      {
        name: 'per_run: an approved call still without its result is not its concern (it awaits its result)',
        call: callWith({ runStatus: 'failed', approval: 'approved', hasResult: false, settled: false }),
        verdict: KEPT,
      },
      { name: 'per_run: but a side-effect call', call: callWith({ runStatus: 'failed', sideEffects: true }), verdict: KEPT },
      { name: 'per_run: a completed run', call: callWith(), verdict: KEPT },
      { name: 'per_run: a running run is not its concern', call: callWith({ runStatus: 'running' }), verdict: KEPT },
      {
        name: "per_service_call: a failed run's sent rounds stay",
        call: callWith({ runStatus: 'failed', visibility: 'per_service_call' }),
        verdict: KEPT,
      },
    ],
  ],
  [
    runIncompleteRule,
    [
      {
        name: 'per_run: a run still going at asOf',
        call: callWith({ runStatus: 'running', settled: false }),
        verdict: omitted('run_incomplete'),
      },
      {
        name: 'per_run: a side-effect call of a run still going',
        call: callWith({ runStatus: 'running', settled: false, sideEffects: true }),
        verdict: omitted('run_incomplete'),
      },
      {
        name: 'per_run: a side-effect call of a run gone silent',
        call: callWith({ runStatus: 'running', settled: true, sideEffects: true, hasResult: false }),
        verdict: KEPT,
      },
      {
        name: 'per_run: a denied call of a run paused for approval',
        call: callWith({ runStatus: 'running', settled: false, approval: 'denied', hasResult: false }),
        verdict: KEPT,
      },
      { name: 'per_run: a completed run', call: callWith(), verdict: KEPT },
      { name: 'per_run: a failed run is not its concern', call: callWith({ runStatus: 'failed' }), verdict: KEPT },
      {
        name: 'per_service_call: a running run',
        call: callWith({ runStatus: 'running', visibility: 'per_service_call' }),
        verdict: KEPT,
      },
    ],
  ],
  [
    orphanResultRule,
    [
      { name: 'a result without its call', call: callWith({ hasCall: false }), verdict: omitted('orphan_result') },
      {
        name: 'a result whose call (and tool name) is unknown',
        call: callWith({ hasCall: false, toolName: '', row: { toolName: null, callEventId: null } }),
        verdict: omitted('orphan_result'),
      },
      { name: 'a call without its result is not its concern', call: callWith({ hasResult: false }), verdict: KEPT },
      { name: 'a call and its result', call: callWith(), verdict: KEPT },
    ],
  ],
  [
    orphanCallRule,
    [
      { name: 'a call without its result', call: callWith({ hasResult: false }), verdict: omitted('orphan_call') },
      { name: 'a call and its result', call: callWith(), verdict: KEPT },
      {
        name: 'approved, its result not recorded yet',
        call: callWith({ hasResult: false, approval: 'approved', settled: false }),
        verdict: omitted('awaiting_result'),
      },
      {
        name: 'approved, a side-effect call whose resumed run ended without its result: the notice below',
        call: callWith({ hasResult: false, approval: 'approved', sideEffects: true }),
        verdict: KEPT,
      },
      {
        name: 'approved, not a side-effect tool: waits for its result however long',
        call: callWith({ hasResult: false, approval: 'approved' }),
        verdict: omitted('awaiting_result'),
      },
      { name: 'denied: the denial below', call: callWith({ hasResult: false, approval: 'denied' }), verdict: KEPT },
      {
        name: 'a side-effect call of a settled run: the notice below',
        call: callWith({ hasResult: false, sideEffects: true }),
        verdict: KEPT,
      },
      {
        name: 'a side-effect call of a run still going',
        call: callWith({ hasResult: false, sideEffects: true, settled: false }),
        verdict: omitted('orphan_call'),
      },
    ],
  ],
  [
    trailingUnsentRule,
    [
      { name: 'a call requested after its run ended', call: callWith({ late: true }), verdict: omitted('trailing_unsent') },
      {
        name: 'the last round, no later service call carried it',
        call: callWith({ inUnsentLastRound: true }),
        verdict: omitted('trailing_unsent'),
      },
      { name: 'a round the model answered', call: callWith(), verdict: KEPT },
      {
        name: 'a side-effect call in the last round, with its result',
        call: callWith({ inUnsentLastRound: true, sideEffects: true }),
        verdict: KEPT,
      },
      {
        name: 'a side-effect call requested after its run ended, without result',
        call: callWith({ late: true, sideEffects: true, hasResult: false }),
        verdict: KEPT,
      },
      { name: 'a denied call in the last round', call: callWith({ inUnsentLastRound: true, approval: 'denied' }), verdict: KEPT },
    ],
  ],
  [
    deniedRule,
    [
      {
        name: 'denied and never run: the denial, as an error',
        call: callWith({ hasResult: false, approval: 'denied', row: DENIED_ROW }),
        verdict: DENIED,
      },
      {
        name: 'denied without a reason',
        call: callWith({ hasResult: false, approval: 'denied' }),
        verdict: { ...DENIED, notice: deniedCallNotice('get_order', null) } as CallVerdict,
      },
      { name: 'denied, and the producer recorded a result: the result stands', call: callWith({ approval: 'denied' }), verdict: KEPT },
      { name: 'approved', call: callWith({ approval: 'approved' }), verdict: KEPT },
    ],
  ],
  [
    interruptedRule,
    [
      {
        name: 'a side-effect call, no result, its run over',
        call: callWith({ hasResult: false, sideEffects: true }),
        verdict: INTERRUPTED,
      },
      { name: 'its run still going', call: callWith({ hasResult: false, sideEffects: true, settled: false }), verdict: KEPT },
      { name: 'with its result', call: callWith({ sideEffects: true }), verdict: KEPT },
      { name: 'not a side-effect tool', call: callWith({ hasResult: false }), verdict: KEPT },
    ],
  ],
  [
    policySkippedRule,
    [
      { name: "recorded 'full', policy 'full'", call: callWith(), verdict: KEPT },
      {
        name: "recorded 'metadata', policy 'full' today",
        call: callWith({ row: { persist: 'metadata' } }),
        verdict: omitted('policy_skipped'),
      },
      { name: "recorded 'none'", call: callWith({ row: { persist: 'none' } }), verdict: omitted('policy_skipped') },
      { name: "recorded 'full', policy 'none' today", call: callWith({ persistToday: 'none' }), verdict: omitted('policy_skipped') },
      {
        name: "recorded 'metadata', policy 'none' today",
        call: callWith({ row: { persist: 'metadata' }, persistToday: 'none' }),
        verdict: omitted('policy_skipped'),
      },
      {
        name: "recorded 'full', policy 'metadata' today",
        call: callWith({ persistToday: 'metadata' }),
        verdict: omitted('policy_skipped'),
      },
    ],
  ],
  [
    invalidatedRule,
    [
      { name: 'no later mutation', call: callWith({ staleResults: 'placeholder' }), verdict: KEPT },
      {
        name: "drop: left out, naming the mutation's call",
        call: callWith({ invalidation: CANCEL }),
        verdict: { kind: 'omitted', reason: 'invalidated', invalidatedBy: 'call_cancel' },
      },
      {
        name: 'drop: invalidation outranks expiry',
        call: callWith({ invalidation: CANCEL, freshnessWindowSeconds: 1 }),
        verdict: { kind: 'omitted', reason: 'invalidated', invalidatedBy: 'call_cancel' },
      },
      {
        name: 'placeholder: a fresh result becomes the invalidated notice',
        call: callWith({ invalidation: CANCEL, staleResults: 'placeholder' }),
        verdict: { kind: 'notice', notice: INVALIDATED_NOTICE, expired: false, invalidatedBy: 'call_cancel' },
      },
      {
        name: 'placeholder: an expired result gets the invalidated notice, still marked expired',
        call: callWith({ invalidation: CANCEL, staleResults: 'placeholder', freshnessWindowSeconds: 1 }),
        verdict: { kind: 'notice', notice: INVALIDATED_NOTICE, expired: true, invalidatedBy: 'call_cancel' },
      },
    ],
  ],
  [
    staleRule,
    [
      { name: 'well inside the window', call: callWith(), verdict: KEPT },
      {
        name: 'exactly at the window edge is still fresh',
        call: callWith({ freshnessWindowSeconds: 30, asOf: COMPLETED_AT + 30_000 }),
        verdict: KEPT,
      },
      {
        name: 'drop: 1 ms past the window edge',
        call: callWith({ freshnessWindowSeconds: 30, asOf: COMPLETED_AT + 30_001 }),
        verdict: omitted('stale'),
      },
      {
        name: 'placeholder: 1 ms past the window edge becomes the expired notice',
        call: callWith({ freshnessWindowSeconds: 30, asOf: COMPLETED_AT + 30_001, staleResults: 'placeholder' }),
        verdict: { kind: 'notice', notice: expiredResultNotice('get_order', 30), expired: true },
      },
      { name: 'window 0: the result as it arrives', call: callWith({ freshnessWindowSeconds: 0, asOf: COMPLETED_AT }), verdict: KEPT },
      {
        name: 'window 0: a millisecond later',
        call: callWith({ freshnessWindowSeconds: 0, asOf: COMPLETED_AT + 1 }),
        verdict: omitted('stale'),
      },
    ],
  ],
];

describe.each(TABLES.map(([rule, cases]) => [rule.name, rule, cases] as const))('%s', (_name, rule, cases) => {
  it.each(cases)('$name', ({ call, verdict }) => {
    expect(rule(call)).toStrictEqual(verdict);
  });
});

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
