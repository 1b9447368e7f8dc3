/** What the replay property tests share: a replay in the two chat formats, the requests they ask, a policy from a document. */
import fc from 'fast-check';
import type { ToolEvent } from '@toolhistory/contract';
import { testTokens } from '../projection/test-tokens.fixture';
import { replayHistory, type ReplayRequest } from './replay-history';
import { parseReplayPolicy } from './parse-replay-policy';
import type { ReplayPolicy } from './replay-policy';
import { readModelOf } from './replay-test-support.fixture';
import { T0 } from './replay-trace-arbitraries.fixture';

/** The read model of the events (built in the given batches), replayed in the OpenAI and Anthropic formats. */
export function replayAll(events: ToolEvent[], batchCuts: number[], policy: ReplayPolicy, request: Omit<ReplayRequest, 'format'>) {
  const { runs, invocations } = readModelOf(events, batchCuts);
  return {
    openai: replayHistory({ ...request, format: 'openai_chat' }, runs, invocations, policy, testTokens),
    anthropic: replayHistory({ ...request, format: 'anthropic_messages' }, runs, invocations, policy, testTokens),
    invocations,
  };
}

/** A request of conversation c1 on the web channel, as of any moment of the traces' first 400 s. */
export const replayRequests = fc.integer({ min: 0, max: 400 }).map((seconds) => ({
  tenantId: 'acme',
  conversationId: 'c1',
  channel: 'web',
  asOf: T0 + seconds * 1_000,
}));

export function parseOk(document: unknown): ReplayPolicy {
  const parsed = parseReplayPolicy(document);
  if (!parsed.ok) throw new Error(parsed.problems.join());
  return parsed.policy;
}
