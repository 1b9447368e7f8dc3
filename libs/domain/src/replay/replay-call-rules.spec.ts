import {
  awaitingApprovalRule,
  CallRule,
  orphanCallRule,
  orphanResultRule,
  runFailedRule,
  runIncompleteRule,
  offBranchRule,
  trailingUnsentRule,
} from './replay-call-rules';

import { callWith, type Case, KEPT, omitted } from './replay-call-rules.fixture';

/** Each rule that decides whether a call's run let it reach the model, and whether it is answered: a table of cases each. */
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
];

describe.each(TABLES.map(([rule, cases]) => [rule.name, rule, cases] as const))('%s', (_name, rule, cases) => {
  it.each(cases)('$name', ({ call, verdict }) => {
    expect(rule(call)).toStrictEqual(verdict);
  });
});
