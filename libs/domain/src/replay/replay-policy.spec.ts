import { parseReplayPolicy } from './parse-replay-policy';

import { policyOf } from './replay-test-support.fixture';

describe('parseReplayPolicy', () => {
  it('accepts the documented shape and fills defaults', () => {
    const policy = policyOf({ channels: { support: { visibility: 'per_service_call' } }, tools: { search: { freshnessSeconds: 60 } } });
    expect(policy.defaults).toEqual({
      freshnessSeconds: 300,
      visibility: 'per_run',
      staleResults: 'drop',
      persist: 'full',
      abandonedAfterSeconds: 600,
      reasoning: { keep: 'turn' },
    });
    expect(policy.channels.support.visibility).toBe('per_service_call');
  });

  it('names every bad key and value', () => {
    const parsed = parseReplayPolicy({
      defaults: { freshnessSeconds: -5, visibilty: 'per_run' },
      channels: { web: { visibility: 'always' } },
      tools: { search: { freshnessSeconds: '60' }, weather: 'fresh' },
      extra: true,
    });
    expect(parsed.ok).toBe(false);
    if (parsed.ok) return;
    expect(parsed.problems).toEqual([
      'extra: unknown key (expected defaults, channels, tools, tenants)',
      'defaults.freshnessSeconds: must be a whole number of seconds, 0 or more',
      'defaults.visibilty: unknown key (allowed here: freshnessSeconds, visibility, staleResults, persist, maxHistoryTokens, abandonedAfterSeconds, reasoning, maskArguments, maskResult, detectors, maxResultChars, retention)',
      'channels.web.visibility: must be one of per_run, per_service_call',
      'tools.search.freshnessSeconds: must be a whole number of seconds, 0 or more',
      'tools.weather: must be an object',
    ]);
  });
});
