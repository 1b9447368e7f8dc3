import type { JsonObject, JsonValue, ToolEvent } from '@toolhistory/contract';
import {
  approvalDecided,
  approvalRequested,
  runCompleted,
  runFailed,
  toolCall,
  toolResult,
} from '../../../../test/support/tool-event-factory';
import { testTokens } from '../projection/test-tokens.fixture';

import { anthropicProblems, inRun, iso, openAiProblems, policyOf, replayOf } from './replay-test-support.fixture';

const WEB_SEARCH = { tools: { web_search: { citations: { items: '$.results[*]', number: '$.sourceNumber' } } } };

const sources = (...numbers: JsonValue[]): JsonObject[] =>
  numbers.map((n) => ({ sourceNumber: n, url: `https://example.com/${String(n)}` }));
const numbersOf = (result: unknown) => ((result as { results: Array<{ sourceNumber: unknown }> }).results ?? []).map((r) => r.sourceNumber);

describe('citation compaction (`citations`)', () => {
  describe('in replay', () => {
    const run = inRun;
    const SEARCH_RESULT = { query: 'weather', results: sources(1, 2, 3, 4, 5) };

    /** A run of one web_search answered at start + 1 s, then its end at start + 2 s. */
    function searchRun(
      runId: string,
      start: number,
      end: 'completed' | 'failed' | 'running',
      citedSources?: number[],
      isError = false,
    ): ToolEvent[] {
      const toolCallId = `call_${runId}`;
      const events: ToolEvent[] = [
        toolCall(run(runId), {
          roundIndex: 0,
          sequenceIndex: 0,
          toolCallId,
          toolName: 'web_search',
          arguments: { q: 'weather' },
          occurredAt: iso(start),
        }),
        toolResult(run(runId), {
          roundIndex: 0,
          sequenceIndex: 0,
          toolCallId,
          result: isError ? { error: 'quota', results: sources(1) } : SEARCH_RESULT,
          isError,
          occurredAt: iso(start + 1),
        }),
      ];
      if (end === 'completed')
        events.push(runCompleted(run(runId), { occurredAt: iso(start + 2), ...(citedSources === undefined ? {} : { citedSources }) }));
      if (end === 'failed') events.push(runFailed(run(runId), { occurredAt: iso(start + 2) }));
      return events;
    }

    const callsOf = (history: ReturnType<typeof replayOf>) => history.turns.flatMap((t) => t.rounds.flatMap((r) => r.calls));

    it('keeps the cited items of a completed run, counts those left out, and counts the tokens of what is replayed', () => {
      const events = searchRun('r1', 0, 'completed', [4, 2, 4]);
      const whole = replayOf(events);
      const compacted = replayOf(events, {}, policyOf(WEB_SEARCH));
      const [call] = callsOf(compacted);
      expect(numbersOf(JSON.parse(call.result))).toEqual([2, 4]);
      expect(call.resultJson).toEqual({ query: 'weather', results: sources(2, 4) });
      expect(call.compactedItems).toBe(3);
      expect(callsOf(whole)[0].compactedItems).toBe(0);
      const callCost = testTokens('web_search') + testTokens(JSON.stringify({ q: 'weather' }));
      expect(call.tokens).toBe(callCost + testTokens(call.result));
      expect(compacted.historyTokens).toBeLessThan(whole.historyTokens);
    });

    it.each([
      ['a run completed without citedSources', searchRun('r1', 0, 'completed')],
      ['a failed run', searchRun('r1', 0, 'failed')],
      ['a running run', searchRun('r1', 0, 'running')],
      ['an error result', searchRun('r1', 0, 'completed', [], true)],
    ])('replays %s whole, as without the rule', (_d, events) => {
      expect(replayOf(events, {}, policyOf(WEB_SEARCH))).toEqual(replayOf(events));
    });

    it('replays whole as of a moment before the run completed', () => {
      const events = searchRun('r1', 0, 'completed', [2]);
      const beforeEnd = { asOf: Date.parse(iso(1.5)) };
      expect(replayOf(events, beforeEnd, policyOf(WEB_SEARCH))).toEqual(replayOf(events, beforeEnd));
      expect(callsOf(replayOf(events, {}, policyOf(WEB_SEARCH)))[0].compactedItems).toBe(4);
    });

    it('leaves other tools alone', () => {
      const events = searchRun('r1', 0, 'completed', []);
      const other = policyOf({ tools: { other_search: WEB_SEARCH.tools.web_search } });
      expect(replayOf(events, {}, other)).toEqual(replayOf(events));
    });

    it('compacts a result recorded in a resumed run by what that run cites', () => {
      const toolCallId = 'call_search';
      const events: ToolEvent[] = [
        toolCall(run('r1'), {
          roundIndex: 0,
          sequenceIndex: 0,
          toolCallId,
          toolName: 'web_search',
          arguments: { q: 'w' },
          occurredAt: iso(0),
        }),
        approvalRequested(run('r1'), { roundIndex: 0, sequenceIndex: 0, toolCallId, occurredAt: iso(0.5) }),
        runCompleted(run('r1'), { finishReason: 'awaiting_approval', occurredAt: iso(1), citedSources: [1, 2, 3, 4, 5] }),
        approvalDecided(run('r2'), { roundIndex: 0, sequenceIndex: 0, toolCallId, approved: true, occurredAt: iso(10) }),
        toolResult(run('r2'), { roundIndex: 0, sequenceIndex: 0, toolCallId, result: SEARCH_RESULT, occurredAt: iso(11) }),
        runCompleted(run('r2'), { occurredAt: iso(12), citedSources: [3] }),
      ];
      const history = replayOf(events, {}, policyOf(WEB_SEARCH));
      const [call] = callsOf(history);
      expect(numbersOf(call.resultJson)).toEqual([3]);
      expect(call.compactedItems).toBe(4);
      expect(history.turns.map((t) => t.runId)).toEqual(['r2']);
    });

    it.each(['openai_chat', 'anthropic_messages', 'openai_responses', 'gemini', 'bedrock_converse'] as const)(
      'carries the compacted result in %s',
      (format) => {
        const history = replayOf(searchRun('r1', 0, 'completed', [5]), { format }, policyOf(WEB_SEARCH));
        const text = JSON.stringify(history.turns[0].messages);
        expect(text).toContain('example.com/5');
        expect(text).not.toContain('example.com/1');
        if (format === 'openai_chat') expect(openAiProblems(history.turns[0].messages)).toEqual([]);
        if (format === 'anthropic_messages') expect(anthropicProblems(history.turns[0].messages)).toEqual([]);
      },
    );
  });
});
