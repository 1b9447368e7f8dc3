import fc from 'fast-check';
import { keyPeriodMs, parseDuration, parseRetentionPolicy, payloadExpiresAt, retentionOf } from './retention-policy';
import { parsePolicyDocument } from '../policy/tool-history-policy';

describe('retention policy', () => {
  it('reads durations in seconds, minutes, hours and days', () => {
    expect(parseDuration('90s')).toBe(90_000);
    expect(parseDuration('15m')).toBe(900_000);
    expect(parseDuration('12h')).toBe(43_200_000);
    expect(parseDuration('30d')).toBe(2_592_000_000);
    for (const bad of ['', '30', 'd', '0d', '-1d', '1.5h', '30 d', '1w', '01d', '3651d']) expect(parseDuration(bad)).toBeUndefined();
  });

  it('reads retention in defaults, tenants, channels and tools, naming every bad value', () => {
    const parsed = parsePolicyDocument({
      defaults: { retention: '30d' },
      tenants: { acme: { retention: '7d' }, bad: { retention: 7 }, odd: { freshnessSeconds: 1 } },
      channels: { web: { retention: '12h' } },
      tools: { get_order: { retention: '90s' }, pay: { retention: '1y' } },
    });
    expect(parsed).toEqual({
      ok: false,
      problems: [
        'tools.pay.retention: must be a duration such as "30d", "12h", "15m" or "90s" (at most 3650d)',
        'tenants.bad.retention: must be a duration such as "30d", "12h", "15m" or "90s" (at most 3650d)',
        'tenants.odd.freshnessSeconds: unknown key (allowed here: retention)',
      ],
    });
    const good = parseRetentionPolicy({
      defaults: { retention: '30d' },
      tenants: { acme: { retention: '7d' } },
      tools: { t: { retention: '90s' } },
    });
    expect(good).toEqual({
      ok: true,
      policy: { defaults: 2_592_000_000, tenants: { acme: 604_800_000 }, channels: {}, tools: { t: 90_000 } },
    });
  });

  it('applies the shortest limit that names the payload; none: kept until erased', () => {
    const parsed = parseRetentionPolicy({
      defaults: { retention: '30d' },
      tenants: { acme: { retention: '7d' } },
      channels: { web: { retention: '12h' } },
      tools: { get_order: { retention: '90s' }, archive: { retention: '365d' } },
    });
    if (!parsed.ok) throw new Error(parsed.problems.join());
    const { policy } = parsed;
    expect(retentionOf(policy, { tenantId: 'other', channel: 'support', toolName: 'archive' })).toBe(30 * 86_400_000);
    expect(retentionOf(policy, { tenantId: 'acme', channel: 'support', toolName: null })).toBe(7 * 86_400_000);
    expect(retentionOf(policy, { tenantId: 'acme', channel: 'web', toolName: 'archive' })).toBe(12 * 3_600_000);
    expect(retentionOf(policy, { tenantId: 'acme', channel: 'web', toolName: 'get_order' })).toBe(90_000);
    expect(retentionOf({ tenants: {}, channels: {}, tools: {} }, { tenantId: 'a', channel: 'c', toolName: 'constructor' })).toBeNull();
  });

  it('never keeps a payload past its retention, and keeps it at least 99% of it (or all but a second)', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 4_000_000_000_000 }), fc.integer({ min: 1_000, max: 3_650 * 86_400_000 }), (at, retention) => {
        const expiresAt = Date.parse(payloadExpiresAt(at, retention)!);
        expect(expiresAt).toBeLessThanOrEqual(at + retention);
        expect(expiresAt).toBeGreaterThan(at + retention - keyPeriodMs(retention));
        expect(expiresAt % keyPeriodMs(retention)).toBe(0);
      }),
    );
    expect(payloadExpiresAt(Date.parse('2026-01-01T00:00:00.500Z'), 90_000)).toBe('2026-01-01T00:01:30.000Z');
    expect(payloadExpiresAt(0, null)).toBeNull();
  });
});
