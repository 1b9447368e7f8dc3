import type { InvocationRow, RunRow } from '../projection/read-model.types';
import { callContextOf, callScopeOf, isLateCall, isOnBranch, RunAsOf, runAsOf, SeenRow, seenRowsOf } from './replay-call-context';
import { answeredRow, iso, policyOf, T0 } from './replay-test-support.fixture';

const RUN = {
  tenantId: 'acme',
  conversationId: 'c1',
  runId: 'r1',
  channel: 'web',
  status: 'completed',
  startedAt: iso(0),
  lastEventAt: iso(10),
  endedAt: iso(10),
  assistantMessageId: 'msg_r1',
  finishReason: 'stop',
  inputTokens: null,
  outputTokens: null,
  errorCode: null,
  errorMessage: null,
  userMessageId: null,
  citedSources: null,
} satisfies RunRow;

/** An answered call: requested at +1 s, result at +2 s. */
function rowWith(fields: Partial<InvocationRow> = {}): InvocationRow {
  return answeredRow({
    pairKey: `k${fields.roundIndex ?? 0}.${fields.sequenceIndex ?? 0}`,
    requestedAt: iso(1),
    completedAt: iso(2),
    ...fields,
  });
}

const seen = (row: InvocationRow, hasCall = true, hasResult = true): SeenRow => ({ row, hasCall, hasResult });
const ENDED_AT = T0 + 10_000;

describe('isLateCall', () => {
  it.each([
    { name: 'requested before the run ended', call: seen(rowWith({ requestedAt: iso(9) })), endedAt: ENDED_AT, late: false },
    { name: 'requested exactly as the run ended', call: seen(rowWith({ requestedAt: iso(10) })), endedAt: ENDED_AT, late: false },
    {
      name: 'requested 1 ms after the run ended',
      call: seen(rowWith({ requestedAt: new Date(ENDED_AT + 1).toISOString() })),
      endedAt: ENDED_AT,
      late: true,
    },
    { name: 'a run not ended by asOf', call: seen(rowWith({ requestedAt: iso(99) })), endedAt: Number.POSITIVE_INFINITY, late: false },
    { name: 'no call seen', call: seen(rowWith({ requestedAt: iso(99) }), false), endedAt: ENDED_AT, late: false },
  ])('$name', ({ call, endedAt, late }) => {
    expect(isLateCall(call, endedAt)).toBe(late);
  });
});

describe('runAsOf', () => {
  const rounds = [seen(rowWith({ roundIndex: 0 })), seen(rowWith({ roundIndex: 1, requestedAt: iso(5) }))];
  it.each<{ name: string; run: RunRow; rows: SeenRow[]; asOf: number; facts: Omit<RunAsOf, 'run'> }>([
    {
      name: 'completed by asOf with stop: its last round was sent',
      run: RUN,
      rows: rounds,
      asOf: ENDED_AT,
      facts: { status: 'completed', endedAt: ENDED_AT, lastRound: 1, lastRoundSent: true, settled: true, onBranch: true },
    },
    {
      name: 'completed after asOf: still running then',
      run: RUN,
      rows: rounds,
      asOf: ENDED_AT - 1,
      facts: { status: 'running', endedAt: Number.POSITIVE_INFINITY, lastRound: 1, lastRoundSent: false, settled: false, onBranch: true },
    },
    {
      name: 'completed on a tool limit: the last round never reached the model',
      run: { ...RUN, finishReason: 'tool_limit' },
      rows: rounds,
      asOf: ENDED_AT,
      facts: { status: 'completed', endedAt: ENDED_AT, lastRound: 1, lastRoundSent: false, settled: true, onBranch: true },
    },
    {
      name: 'failed',
      run: { ...RUN, status: 'failed', finishReason: null },
      rows: rounds,
      asOf: ENDED_AT,
      facts: { status: 'failed', endedAt: ENDED_AT, lastRound: 1, lastRoundSent: false, settled: true, onBranch: true },
    },
    {
      name: 'the last round ignores late calls and results without calls',
      run: RUN,
      rows: [...rounds, seen(rowWith({ roundIndex: 2, requestedAt: iso(11) })), seen(rowWith({ roundIndex: 3 }), false)],
      asOf: ENDED_AT + 5_000,
      facts: { status: 'completed', endedAt: ENDED_AT, lastRound: 1, lastRoundSent: true, settled: true, onBranch: true },
    },
    {
      name: 'no call yet: no last round',
      run: { ...RUN, status: 'running', endedAt: null, finishReason: null },
      rows: [],
      asOf: ENDED_AT,
      facts: { status: 'running', endedAt: Number.POSITIVE_INFINITY, lastRound: -1, lastRoundSent: false, settled: false, onBranch: true },
    },
    {
      name: 'running and silent for longer than the abandonment limit: settled',
      run: { ...RUN, status: 'running', endedAt: null, finishReason: null, lastEventAt: iso(5) },
      rows: rounds,
      asOf: T0 + 5_000 + 600_001,
      facts: { status: 'running', endedAt: Number.POSITIVE_INFINITY, lastRound: 1, lastRoundSent: false, settled: true, onBranch: true },
    },
    {
      name: 'running and silent for exactly the abandonment limit: not yet',
      run: { ...RUN, status: 'running', endedAt: null, finishReason: null, lastEventAt: iso(5) },
      rows: rounds,
      asOf: T0 + 5_000 + 600_000,
      facts: { status: 'running', endedAt: Number.POSITIVE_INFINITY, lastRound: 1, lastRoundSent: false, settled: false, onBranch: true },
    },
    {
      name: 'stopped for approval, then approved: its last round was sent by the resumed run',
      run: { ...RUN, finishReason: 'tool-calls' },
      rows: [
        rounds[0],
        seen(rowWith({ roundIndex: 1, requestedAt: iso(5), approvalRequestedAt: iso(5), approvalDecidedAt: iso(9), approved: true })),
      ],
      asOf: ENDED_AT,
      facts: { status: 'completed', endedAt: ENDED_AT, lastRound: 1, lastRoundSent: true, settled: true, onBranch: true },
    },
  ])('$name', ({ run, rows, asOf, facts }) => {
    expect(runAsOf(run, rows, asOf, 600_000)).toStrictEqual({ run, ...facts });
  });
});

describe('isOnBranch', () => {
  const branch = new Set(['user_1', 'msg_r1']);
  it.each([
    { name: 'no branch named: every run counts', run: { ...RUN, assistantMessageId: 'elsewhere' }, branch: undefined, on: true },
    { name: 'completed, its answer on the branch', run: RUN, branch, on: true },
    {
      name: 'completed, its answer regenerated',
      run: { ...RUN, assistantMessageId: 'msg_old', userMessageId: 'user_1' },
      branch,
      on: false,
    },
    {
      name: 'running, its user message on the branch',
      run: { ...RUN, assistantMessageId: null, userMessageId: 'user_1' },
      branch,
      on: true,
      status: 'running' as const,
    },
    {
      name: 'failed, its user message edited away',
      run: { ...RUN, userMessageId: 'user_0' },
      branch,
      on: false,
      status: 'failed' as const,
    },
    {
      name: 'running with no user message: on no branch',
      run: { ...RUN, userMessageId: null },
      branch,
      on: false,
      status: 'running' as const,
    },
  ])('$name', ({ run, branch: path, on, status }) => {
    expect(isOnBranch(run, status ?? 'completed', path)).toBe(on);
  });

  it('judges a run by what it was at asOf: completed later, it was running, so its user message counts', () => {
    const run = { ...RUN, assistantMessageId: 'msg_new', userMessageId: 'user_1' };
    const branch = new Set(['user_1']);
    expect(runAsOf(run, [], ENDED_AT - 1, 600_000, branch).onBranch).toBe(true);
    expect(runAsOf(run, [], ENDED_AT, 600_000, branch).onBranch).toBe(false);
  });

  it('puts a call resolved in a later run on the branch of that run', () => {
    const scope = callScopeOf(
      { asOf: ENDED_AT, channel: 'web', branchMessageIds: ['user_1', 'msg_r2'] },
      [],
      policyOf({}),
      (r) => r.toolCallId,
    );
    const row = rowWith({ resultRunId: 'r2', approvalRequestedAt: iso(1), approvalDecidedAt: iso(1), approved: true, decisionRunId: 'r2' });
    const paused = runAsOf(
      { ...RUN, assistantMessageId: 'msg_paused', userMessageId: 'user_1' },
      [seen(row)],
      ENDED_AT,
      600_000,
      scope.branch,
    );
    const resumed = runAsOf({ ...RUN, runId: 'r2', assistantMessageId: 'msg_r2' }, [], ENDED_AT, 600_000, scope.branch);
    const regenerated = { ...resumed, onBranch: false };
    expect(callContextOf(scope, paused, seen(row), new Map([['r2', resumed]])).offBranch).toBe(false);
    expect(callContextOf(scope, paused, seen(row), new Map([['r2', regenerated]])).offBranch).toBe(true);
  });
});

describe('seenRowsOf', () => {
  it('keeps rows with a call or a result recorded by asOf, in round then sequence order', () => {
    const answered = rowWith({ roundIndex: 1, sequenceIndex: 1 });
    const early = rowWith({ roundIndex: 1, sequenceIndex: 0, completedAt: iso(3) });
    const resultOnly = rowWith({ roundIndex: 0, callEventId: null, requestedAt: null });
    const notYet = rowWith({ roundIndex: 0, sequenceIndex: 1, requestedAt: iso(4), completedAt: iso(5) });
    expect(seenRowsOf([answered, notYet, early, resultOnly], T0 + 2_000)).toStrictEqual([
      seen(resultOnly, false, true),
      seen(early, true, false),
      seen(answered),
    ]);
  });
});

describe('callContextOf', () => {
  const policy = policyOf({
    channels: { web: { visibility: 'per_service_call', staleResults: 'placeholder' } },
    tools: { get_order: { freshnessSeconds: 30, persist: 'metadata' } },
  });
  const request = { asOf: ENDED_AT, channel: 'web' };
  const reportedId = (row: InvocationRow) => `id:${row.toolCallId}`;

  it('looks up the policy, the reported ids and the run facts for one call', () => {
    const row = rowWith({ roundIndex: 1 });
    const cancel = rowWith({ toolCallId: 'call_cancel', toolName: 'cancel_order', roundIndex: 2 });
    const scope = { ...callScopeOf(request, [], policy, reportedId), invalidations: new Map([[row, cancel]]) };
    const run = runAsOf(RUN, [seen(row)], ENDED_AT);
    expect(callContextOf(scope, { ...run, lastRoundSent: false }, seen(row))).toStrictEqual({
      row,
      toolCallId: 'id:call_get',
      toolName: 'get_order',
      hasCall: true,
      hasResult: true,
      runStatus: 'completed',
      offBranch: false,
      visibility: 'per_service_call',
      late: false,
      inUnsentLastRound: true,
      persistToday: 'metadata',
      staleResults: 'placeholder',
      freshnessWindowSeconds: 30,
      asOf: ENDED_AT,
      invalidation: { toolName: 'cancel_order', toolCallId: 'id:call_cancel' },
      approval: 'none',
      sideEffects: false,
      settled: true,
    });
  });

  it("lets the request's overrides win, and names a result's unknown tool ''", () => {
    const row = rowWith({ toolName: null, callEventId: null });
    const scope = callScopeOf({ ...request, freshnessWindowSeconds: 5, staleResults: 'drop' }, [row], policy, reportedId);
    const context = callContextOf(scope, runAsOf(RUN, [seen(row, false)], ENDED_AT), seen(row, false));
    expect(context).toMatchObject({ toolName: '', freshnessWindowSeconds: 5, staleResults: 'drop', persistToday: 'full' });
    expect(context).not.toHaveProperty('invalidation');
  });
});
