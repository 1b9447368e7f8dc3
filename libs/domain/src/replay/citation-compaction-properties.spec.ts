import fc from 'fast-check';
import type { JsonObject, ToolEvent } from '@toolhistory/contract';
import { testTokens } from '../projection/test-tokens.fixture';
import { compactCitedItems } from './citation-compaction';
import { replayHistory, ReplayRequest } from './replay-history';
import { parseReplayPolicy } from './parse-replay-policy';
import { MAX_TOKEN_BUDGET, ReplayPolicy } from './replay-policy';
import { anthropicProblems, openAiProblems, readModelOf } from './replay-test-support.fixture';
import { delivered, policies, T0 } from './replay-trace-arbitraries.fixture';

/** tool_0 of the traces is a search tool: its results list sources, some numbered as text, some not numbered at all. */
const CITATIONS = (() => {
  const parsed = parseReplayPolicy({ tools: { tool_0: { citations: { items: '$.results[*]', number: '$.n' } } } });
  if (!parsed.ok) throw new Error(parsed.problems.join());
  return parsed.policy.tools.tool_0.citations!;
})();

const withCitations = (policy: ReplayPolicy): ReplayPolicy => ({
  ...policy,
  tools: { ...policy.tools, tool_0: { ...policy.tools.tool_0, citations: CITATIONS } },
});

const item = fc.record(
  {
    n: fc.oneof(fc.integer({ min: 0, max: 6 }), fc.integer({ min: 0, max: 6 }).map(String), fc.constant('none')),
    title: fc.string({ maxLength: 3 }),
  },
  { requiredKeys: ['title'] },
);
const citedSources = fc.option(fc.array(fc.integer({ min: 0, max: 6 }), { maxLength: 6 }), { nil: undefined, freq: 3 });

/**
 * The traces' deliveries with search results for tool_0 and, per completed
 * run, what its answer cites (or nothing said). The same event, delivered
 * twice, carries the same data (functions of its id).
 */
const citedTraces = fc
  .tuple(delivered, fc.func(fc.array(item, { maxLength: 6 })), fc.func(citedSources))
  .map(([{ events, batchCuts }, itemsOf, citedOf]) => {
    const withData = events.map((event): ToolEvent => {
      // The traces' calls are tool_<sequenceIndex>.
      if (event.type === 'ToolResultReceived' && event.sequenceIndex === 0)
        return { ...event, result: { ...(event.result as JsonObject), results: itemsOf(event.eventId) } };
      if (event.type === 'RunCompleted') {
        const cited = citedOf(event.eventId);
        return cited === undefined ? event : { ...event, citedSources: cited };
      }
      return event;
    });
    return { events: withData, batchCuts };
  });

const request = fc
  .integer({ min: 0, max: 400 })
  .map((seconds) => ({ tenantId: 'acme', conversationId: 'c1', channel: 'web', asOf: T0 + seconds * 1_000 }));

type Item = { n?: number | string; title: string };
const numberOf = (i: Item): number | undefined =>
  typeof i.n === 'number' ? i.n : typeof i.n === 'string' && /^\d+$/.test(i.n) ? Number(i.n) : undefined;

function replay(
  events: ToolEvent[],
  batchCuts: number[],
  policy: ReplayPolicy,
  req: Omit<ReplayRequest, 'format'>,
  format: 'openai_chat' | 'anthropic_messages' = 'openai_chat',
) {
  const { runs, invocations } = readModelOf(events, batchCuts);
  return replayHistory({ ...req, format }, runs, invocations, policy, testTokens);
}

describe('citation compaction properties (any delivery of any trace, any cited sources)', () => {
  it('keeps replay valid for the OpenAI and Anthropic APIs', () => {
    fc.assert(
      fc.property(citedTraces, policies, request, ({ events, batchCuts }, policy, req) => {
        for (const turn of replay(events, batchCuts, withCitations(policy), req).turns) expect(openAiProblems(turn.messages)).toEqual([]);
        for (const turn of replay(events, batchCuts, withCitations(policy), req, 'anthropic_messages').turns)
          expect(anthropicProblems(turn.messages)).toEqual([]);
      }),
      { numRuns: 300 },
    );
  });

  it('keeps exactly the cited items (and those without a number), in their order with their numbers, and counts the rest', () => {
    fc.assert(
      fc.property(citedTraces, policies, request, ({ events, batchCuts }, policy, req) => {
        const unlimited = { ...req, maxHistoryTokens: MAX_TOKEN_BUDGET };
        const whole = replay(events, batchCuts, policy, unlimited);
        const compacted = replay(events, batchCuts, withCitations(policy), unlimited);
        // The same calls are kept, in the same turns: only results change.
        const ids = (h: typeof whole) => h.turns.map((t) => [t.runId, t.rounds.map((r) => r.calls.map((c) => c.toolCallId))]);
        expect(ids(compacted)).toEqual(ids(whole));
        expect(compacted.omitted).toEqual(whole.omitted);
        whole.turns.forEach((turn, t) => {
          // A result is replayed in the run that recorded it: that run's answer is the one that cites.
          const completion = events.find(
            (e) => e.type === 'RunCompleted' && e.runId === turn.runId && Date.parse(e.occurredAt) <= req.asOf,
          );
          const cited = completion?.type === 'RunCompleted' ? completion.citedSources : undefined;
          turn.rounds.forEach((round, r) =>
            round.calls.forEach((call, c) => {
              const got = compacted.turns[t].rounds[r].calls[c];
              const items = (call.resultJson as { results?: Item[] } | undefined)?.results;
              if (call.toolName !== 'tool_0' || call.isError || items === undefined || cited === undefined) {
                expect(got).toEqual(call);
                return;
              }
              const kept = items.filter((i) => numberOf(i) === undefined || cited.includes(numberOf(i)!));
              expect(got.resultJson).toEqual({ ...(call.resultJson as JsonObject), results: kept });
              expect(got.result).toBe(JSON.stringify(got.resultJson));
              expect(got.compactedItems).toBe(items.length - kept.length);
              if (got.compactedItems === 0) expect(got).toEqual(call);
              else expect(got.tokens).toBeLessThan(call.tokens);
            }),
          );
        });
        const countedTokens = compacted.turns.flatMap((t) => t.rounds.flatMap((r) => r.calls)).reduce((sum, c) => sum + c.tokens, 0);
        expect(compacted.historyTokens).toBe(countedTokens);
      }),
      { numRuns: 300 },
    );
  });

  it('replays runs that said nothing about citations exactly as without the rule', () => {
    fc.assert(
      fc.property(citedTraces, policies, request, ({ events, batchCuts }, policy, req) => {
        const unsaid = events.map((e) => (e.type === 'RunCompleted' ? (({ citedSources: _, ...rest }) => rest)(e) : e));
        expect(replay(unsaid, batchCuts, withCitations(policy), req)).toEqual(replay(unsaid, batchCuts, policy, req));
      }),
      { numRuns: 200 },
    );
  });

  it('compacts the JSON text of a result, however spaced, as the result itself, written back as JSON text', () => {
    const result = fc.record(
      { query: fc.string({ maxLength: 4 }), results: fc.array(item, { maxLength: 6 }) },
      { requiredKeys: ['results'] },
    );
    fc.assert(
      fc.property(
        result,
        fc.array(fc.integer({ min: 0, max: 6 }), { maxLength: 6 }),
        fc.constantFrom(undefined, 2),
        (value, cited, space) => {
          const text = JSON.stringify(value, null, space);
          const asObject = compactCitedItems(value as JsonObject, CITATIONS, new Set(cited));
          expect(compactCitedItems(text, CITATIONS, new Set(cited))).toEqual({
            result: asObject.compactedItems === 0 ? text : JSON.stringify(asObject.result),
            compactedItems: asObject.compactedItems,
          });
        },
      ),
      { numRuns: 300 },
    );
  });
});
