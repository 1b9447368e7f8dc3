import fc from 'fast-check';
import type { ToolEvent } from '@toolhistory/contract';
import { completedRun, runCompleted, runFailed, toolCall, toolResult } from '../../../../test/support/tool-event-factory';
import { conversationKeyString, invocationKeyString, runKeyString } from './read-model-keys';
import { projectEvents, ReadModelChanges, ReadModelState } from './evolve-read-model';
import { testTokens } from './test-tokens.fixture';

const scope = { tenantId: 'acme', conversationId: 'c1', runId: 'r1', channel: 'support' };
const empty = (): ReadModelState => ({ conversations: new Map(), runs: new Map(), invocations: new Map() });

/** Applies changes to a state, as the store's upserts do. */
function apply(state: ReadModelState, changes: ReadModelChanges): ReadModelState {
  const next = { conversations: new Map(state.conversations), runs: new Map(state.runs), invocations: new Map(state.invocations) };
  for (const row of changes.conversations) next.conversations.set(conversationKeyString(row), row);
  for (const row of changes.runs) next.runs.set(runKeyString(row), row);
  for (const row of changes.invocations) next.invocations.set(invocationKeyString(row), row);
  return next;
}

const project = (events: ToolEvent[]) => apply(empty(), projectEvents(empty(), events, testTokens));

describe('projectEvents', () => {
  it('pairs a call with its result by toolCallId', () => {
    const state = project([
      toolCall(scope, { roundIndex: 0, sequenceIndex: 0, toolCallId: 'call_a', toolName: 'git_status', arguments: { path: '.' } }),
      toolResult(scope, { roundIndex: 0, sequenceIndex: 0, toolCallId: 'call_a', result: 'clean', isError: false }),
    ]);
    expect([...state.invocations.values()]).toEqual([
      expect.objectContaining({ pairKey: 'id:call_a', toolName: 'git_status', arguments: { path: '.' }, result: 'clean', isError: false }),
    ]);
  });

  it('pairs a result that arrives before its call, when the call arrives', () => {
    const result = toolResult(scope, { roundIndex: 1, sequenceIndex: 0, toolCallId: 'call_b', result: { ok: true } });
    const call = toolCall(scope, { roundIndex: 1, sequenceIndex: 0, toolCallId: 'call_b', toolName: 'search' });
    const afterResult = apply(empty(), projectEvents(empty(), [result], testTokens));
    expect([...afterResult.invocations.values()][0]).toMatchObject({ toolName: null, result: { ok: true } });
    const afterCall = apply(afterResult, projectEvents(afterResult, [call], testTokens));
    expect([...afterCall.invocations.values()]).toEqual([
      expect.objectContaining({ toolName: 'search', result: { ok: true }, callEventId: call.eventId, resultEventId: result.eventId }),
    ]);
  });

  it('pairs calls without an id by round and sequence', () => {
    const state = project([
      toolCall(scope, { roundIndex: 0, sequenceIndex: 0, toolCallId: '' }),
      toolCall(scope, { roundIndex: 0, sequenceIndex: 1, toolCallId: '' }),
      toolResult(scope, { roundIndex: 0, sequenceIndex: 1, toolCallId: '', result: 'second' }),
      toolResult(scope, { roundIndex: 0, sequenceIndex: 0, toolCallId: '', result: 'first' }),
    ]);
    const rows = [...state.invocations.values()].sort((a, b) => a.sequenceIndex - b.sequenceIndex);
    expect(rows.map((r) => [r.pairKey, r.result])).toEqual([
      ['pos:0:0', 'first'],
      ['pos:0:1', 'second'],
    ]);
  });

  it('records a call that arrives after its run ended, and marks it', () => {
    const state = project([runCompleted(scope), toolCall(scope, { roundIndex: 2, sequenceIndex: 0 })]);
    expect([...state.runs.values()][0].status).toBe('completed');
    expect([...state.invocations.values()][0]).toMatchObject({ roundIndex: 2, callAfterRunEnd: true });
  });

  it('completes a run with its assistant message, finish reason and usage', () => {
    const completed = runCompleted(scope, {
      assistantMessageId: 'msg-9',
      finishReason: 'tool_limit',
      usage: [{ inputTokens: 10, outputTokens: 3 }],
    });
    const run = [...project([toolCall(scope, { roundIndex: 0, sequenceIndex: 0 }), completed]).runs.values()][0];
    expect(run).toMatchObject({
      status: 'completed',
      assistantMessageId: 'msg-9',
      finishReason: 'tool_limit',
      inputTokens: 10,
      outputTokens: 3,
      endedAt: completed.occurredAt,
      channel: 'support',
    });
  });

  it("sums a run's tokens over its service calls, and leaves them null when no usage was reported", () => {
    const tokensOf = (completed: ToolEvent) => {
      const run = [...project([completed]).runs.values()][0];
      return [run.inputTokens, run.outputTokens];
    };
    const calls = [
      { inputTokens: 1000, outputTokens: 40, model: 'model-a' },
      { inputTokens: 1300, outputTokens: 25, model: 'model-b' },
      { inputTokens: 7, outputTokens: 0 },
    ];
    expect(tokensOf(runCompleted(scope, { usage: calls }))).toEqual([2307, 65]);
    expect(tokensOf(runCompleted(scope, { usage: [] }))).toEqual([0, 0]);
    expect(tokensOf(runCompleted(scope, { usage: undefined }))).toEqual([null, null]);
  });

  it('keeps the first terminal status of a run', () => {
    const run = [...project([runFailed(scope), runCompleted(scope)]).runs.values()][0];
    expect(run).toMatchObject({ status: 'failed', errorCode: 'provider_timeout', assistantMessageId: null });
  });

  it('keeps the first result recorded for a call', () => {
    const state = project([
      toolCall(scope, { roundIndex: 0, sequenceIndex: 0 }),
      toolResult(scope, { roundIndex: 0, sequenceIndex: 0, result: 'first' }),
      toolResult(scope, { roundIndex: 0, sequenceIndex: 0, result: 'second' }),
    ]);
    expect([...state.invocations.values()][0].result).toBe('first');
  });

  it('takes a run start time from its earliest event, whatever the arrival order', () => {
    const early = toolCall(scope, { roundIndex: 0, sequenceIndex: 0, occurredAt: '2026-01-01T00:00:00.000Z' });
    const late = runCompleted(scope, { occurredAt: '2026-01-01T00:05:00.000Z' });
    const run = [...project([late, early]).runs.values()][0];
    expect(run.startedAt).toBe(early.occurredAt);
    expect(run.lastEventAt).toBe(late.occurredAt);
  });

  it('gives the same read model however a stream is cut into batches (incremental equals rebuild)', () => {
    const trace = [
      ...completedRun({ ...scope, runId: 'a' }, [2, 1]),
      ...completedRun({ ...scope, runId: 'b' }, [3]),
      runFailed({ ...scope, runId: 'c' }),
      toolResult({ ...scope, runId: 'c' }, { roundIndex: 0, sequenceIndex: 0 }),
      toolCall({ ...scope, runId: 'c' }, { roundIndex: 0, sequenceIndex: 0 }),
    ];
    const rebuilt = project(trace);
    fc.assert(
      fc.property(fc.uniqueArray(fc.integer({ min: 1, max: trace.length - 1 }), { maxLength: 6 }), (cuts) => {
        const bounds = [0, ...[...cuts].sort((a, b) => a - b), trace.length];
        let state = empty();
        for (let i = 0; i < bounds.length - 1; i += 1) {
          state = apply(state, projectEvents(state, trace.slice(bounds[i], bounds[i + 1]), testTokens));
        }
        expect(state).toEqual(rebuilt);
      }),
    );
  });
});
