import fc from 'fast-check';
import type { ToolEvent } from '@toolhistory/contract';
import type { RunRow } from '../projection/read-model.types';
import { HistoryFormat, replayHistory } from './replay-history';
import { FORMAT_PROBLEMS, readModelOf } from './replay-test-support.fixture';
import { testTokens } from '../projection/test-tokens.fixture';
import { delivered, policies, T0 } from './replay-trace-arbitraries.fixture';

/** Every run of the trace starts from a user message of its own, as a host that names them publishes it. */
const withUserMessages = (events: ToolEvent[]): ToolEvent[] => events.map((e) => ({ ...e, userMessageId: `user-${e.runId}` }));

/** Any path of the host's message ids: some of the runs' user messages and answers, and ids the conversation never had. */
const branches = fc.subarray(
  ['user-run-0', 'msg-0', 'user-run-1', 'msg-1', 'user-run-2', 'msg-2', 'user-run-3', 'msg-3', 'never-recorded'],
  { minLength: 1 },
);

const request = fc.integer({ min: 0, max: 400 }).map((seconds) => ({
  tenantId: 'acme',
  conversationId: 'c1',
  channel: 'web',
  asOf: T0 + seconds * 1_000,
  maxHistoryTokens: 2_147_483_647,
}));

/** The rule restated plainly: a run is on the path by its answer once it completed (by asOf), by its user message otherwise. */
function onPath(run: RunRow | undefined, path: readonly string[], asOf: number): boolean {
  if (run === undefined) return false;
  const completed = run.status === 'completed' && run.endedAt !== null && Date.parse(run.endedAt) <= asOf;
  const message = completed ? run.assistantMessageId : run.userMessageId;
  return message !== null && path.includes(message);
}

const FORMATS = Object.keys(FORMAT_PROBLEMS) as HistoryFormat[];

describe('replayHistory with the host branch (any delivery of any trace, any path)', () => {
  it('is valid for every format and accounts for every recorded call once: replayed, or omitted with a reason', () => {
    fc.assert(
      fc.property(delivered, policies, request, branches, ({ events, batchCuts }, policy, req, path) => {
        const { runs, invocations } = readModelOf(withUserMessages(events), batchCuts);
        const visible = invocations.filter(
          (row) =>
            (row.callEventId !== null && Date.parse(row.requestedAt!) <= req.asOf) ||
            (row.resultEventId !== null && Date.parse(row.completedAt!) <= req.asOf),
        ).length;
        for (const format of FORMATS) {
          const history = replayHistory({ ...req, format, branchMessageIds: path }, runs, invocations, policy, testTokens);
          for (const turn of history.turns) expect([format, FORMAT_PROBLEMS[format](turn.messages)]).toEqual([format, []]);
          const replayed = history.turns.flatMap((t) => t.rounds.flatMap((r) => r.calls)).length;
          expect(replayed + history.omitted.length).toBe(visible);
        }
      }),
      { numRuns: 300 },
    );
  });

  it('keeps exactly what the whole conversation keeps in the turns of runs on the path, and nothing of the others', () => {
    let offBranch = 0;
    fc.assert(
      fc.property(delivered, policies, request, branches, ({ events, batchCuts }, policy, req, path) => {
        const { runs, invocations } = readModelOf(withUserMessages(events), batchCuts);
        const whole = replayHistory({ ...req, format: 'openai_chat' }, runs, invocations, policy, testTokens);
        const onBranch = replayHistory({ ...req, format: 'openai_chat', branchMessageIds: path }, runs, invocations, policy, testTokens);
        const runById = new Map(runs.map((r) => [r.runId, r]));
        const expected = whole.turns.filter((turn) => onPath(runById.get(turn.runId), path, req.asOf));
        expect(onBranch.turns).toEqual(expected);
        // What the branch leaves out is said: each call of a turn off the path is omitted as off_branch.
        const offPath = whole.turns.filter((turn) => !onPath(runById.get(turn.runId), path, req.asOf));
        const offBranchOmissions = onBranch.omitted.filter((o) => o.reason === 'off_branch');
        expect(offBranchOmissions.length).toBeGreaterThanOrEqual(offPath.reduce((n, t) => n + t.rounds.flatMap((r) => r.calls).length, 0));
        for (const approval of onBranch.pendingApprovals) expect(whole.pendingApprovals).toContainEqual(approval);
        offBranch += offBranchOmissions.length;
      }),
      { numRuns: 300 },
    );
    expect(offBranch).toBeGreaterThan(0);
  });

  it('replays a path naming every message exactly as no path at all', () => {
    const everything = ['user-run-0', 'msg-0', 'user-run-1', 'msg-1', 'user-run-2', 'msg-2', 'user-run-3', 'msg-3'];
    fc.assert(
      fc.property(delivered, policies, request, ({ events, batchCuts }, policy, req) => {
        const { runs, invocations } = readModelOf(withUserMessages(events), batchCuts);
        const whole = replayHistory({ ...req, format: 'anthropic_messages' }, runs, invocations, policy, testTokens);
        const all = replayHistory(
          { ...req, format: 'anthropic_messages', branchMessageIds: everything },
          runs,
          invocations,
          policy,
          testTokens,
        );
        expect(all).toEqual(whole);
      }),
      { numRuns: 200 },
    );
  });
});
