import { parseReplayPolicy } from './parse-replay-policy';

import { policyOf } from './replay-test-support.fixture';

function problemsOf(document: unknown): string[] {
  const parsed = parseReplayPolicy(document);
  return parsed.ok ? [] : parsed.problems;
}

describe('causal invalidation (`invalidates`)', () => {
  describe('the policy rule', () => {
    it('reads a rule whose paths name one value each; tools it names need not be known', () => {
      const policy = policyOf({
        tools: {
          refund: { invalidates: [{ tool: 'never_seen_tool', match: { "$.order['id']": '$.orders[0].id', '$.region': '$.region' } }] },
        },
      });
      expect(policy.tools.refund.invalidates).toEqual([
        {
          tool: 'never_seen_tool',
          match: [
            {
              earlierPath: "$.order['id']",
              earlier: [
                { kind: 'key', key: 'order' },
                { kind: 'key', key: 'id' },
              ],
              mutatingPath: '$.orders[0].id',
              mutating: [
                { kind: 'key', key: 'orders' },
                { kind: 'index', index: 0 },
                { kind: 'key', key: 'id' },
              ],
            },
            {
              earlierPath: '$.region',
              earlier: [{ kind: 'key', key: 'region' }],
              mutatingPath: '$.region',
              mutating: [{ kind: 'key', key: 'region' }],
            },
          ],
        },
      ]);
    });

    it('stops start-up naming the rule and the path for every bad entry, all at once', () => {
      expect(
        problemsOf({
          tools: {
            cancel_order: {
              invalidates: [
                { tool: 'get_order', match: { orderId: '$.id' } },
                { tool: 'get_order', match: { '$.items[*].sku': '$.sku' } },
                { tool: 'get_order', match: { '$.orderId': 42 } },
                { tool: '', match: {} },
                { tool: 'get_order', match: { '$.orderId': '$.id' }, when: 'always' },
                'get_order',
              ],
            },
            refund: { invalidates: [] },
          },
        }),
      ).toEqual([
        'tools.cancel_order.invalidates[0].match["orderId"]: key "orderId" must start with $',
        'tools.cancel_order.invalidates[1].match["$.items[*].sku"]: key "$.items[*].sku" must name one value (no wildcard)',
        'tools.cancel_order.invalidates[2].match["$.orderId"]: value must be a path',
        'tools.cancel_order.invalidates[3].tool: must be a tool name',
        "tools.cancel_order.invalidates[3].match: must map at least one path in the earlier call's arguments to a path in this call's arguments",
        'tools.cancel_order.invalidates[4].when: unknown key (allowed here: tool, match)',
        'tools.cancel_order.invalidates[5]: must be an object with "tool" and "match"',
        'tools.refund.invalidates: must be a non-empty list of {"tool": <name>, "match": {<path in its arguments>: <path in these arguments>}}',
      ]);
    });

    it('is a tool rule only', () => {
      expect(problemsOf({ channels: { web: { invalidates: [{ tool: 'x', match: { '$.a': '$.a' } }] } } })).toEqual([
        'channels.web.invalidates: unknown key (allowed here: freshnessSeconds, visibility, staleResults, maxHistoryTokens, abandonedAfterSeconds, reasoning, retention)',
      ]);
    });
  });
});
