import fc from 'fast-check';

import { replayHistory } from './replay-history';

import { replayValidity } from './replay-validity';

import { readModelOf } from './replay-test-support.fixture';
import { testTokens } from '../projection/test-tokens.fixture';
import { delivered, policies, T0 } from './replay-trace-arbitraries.fixture';

describe('replayValidity', () => {
  it('bounds a stretch of time over which the history does not change', () => {
    fc.assert(
      fc.property(
        delivered,
        policies,
        fc.integer({ min: 0, max: 400_000 }),
        fc.double({ min: 0, max: 1, noNaN: true }),
        ({ events, batchCuts }, policy, offsetMs, where) => {
          const { runs, invocations } = readModelOf(events, batchCuts);
          const request = { tenantId: 'acme', conversationId: 'c1', channel: 'web', asOf: T0 + offsetMs, format: 'openai_chat' as const };
          const validity = replayValidity(request, runs, invocations, policy);
          expect(validity.from).toBeLessThanOrEqual(request.asOf);
          expect(validity.until).toBeGreaterThan(request.asOf);
          const lo = Math.max(validity.from, request.asOf - 1_000_000);
          const hi = Math.min(validity.until - 1, request.asOf + 1_000_000);
          const other = Math.round(lo + (hi - lo) * where);
          expect(replayHistory({ ...request, asOf: other }, runs, invocations, policy, testTokens)).toEqual(
            replayHistory(request, runs, invocations, policy, testTokens),
          );
        },
      ),
      { numRuns: 300 },
    );
  });
});
