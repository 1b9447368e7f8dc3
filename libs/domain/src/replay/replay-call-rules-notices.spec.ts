import {
  CallRule,
  CallVerdict,
  deniedCallNotice,
  deniedRule,
  expiredResultNotice,
  interruptedRule,
  invalidatedRule,
  policySkippedRule,
  staleRule,
} from './replay-call-rules';

import {
  callWith,
  COMPLETED_AT,
  type Case,
  KEPT,
  omitted,
  CANCEL,
  INVALIDATED_NOTICE,
  DENIED,
  INTERRUPTED,
  DENIED_ROW,
} from './replay-call-rules.fixture';

/** Each rule that replays a call with a notice, or keeps it out by policy or staleness: a table of cases each. */
const TABLES: Array<[CallRule, Case[]]> = [
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
