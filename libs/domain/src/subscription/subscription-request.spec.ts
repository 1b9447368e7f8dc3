import { checkSubscriptionRequest } from './subscription-request';

describe('checkSubscriptionRequest', () => {
  it('starts from the beginning when no position is given, and keeps the types asked for once each', () => {
    expect(checkSubscriptionRequest({ tenantId: 'acme' })).toEqual({ ok: true, value: { tenantId: 'acme', after: '0', types: [] } });
    expect(
      checkSubscriptionRequest({ tenantId: 'acme', fromPosition: '0042', types: ['RunCompleted', 'RunCompleted', 'RunFailed'] }),
    ).toEqual({
      ok: true,
      value: { tenantId: 'acme', after: '42', types: ['RunCompleted', 'RunFailed'] },
    });
  });

  it('accepts positions beyond 2^53 exactly, up to the largest a store holds (2^63 - 1)', () => {
    const result = checkSubscriptionRequest({ tenantId: 'acme', fromPosition: '9223372036854775807' });
    expect(result).toEqual({ ok: true, value: { tenantId: 'acme', after: '9223372036854775807', types: [] } });
  });

  it.each([
    [{ tenantId: '' }, 'tenant_id is required'],
    [{ tenantId: 'acme', fromPosition: '-1' }, 'from_position must be a whole number'],
    [{ tenantId: 'acme', fromPosition: '18446744073709551616' }, 'from_position must be a whole number'],
    [{ tenantId: 'acme', fromPosition: '18446744073709551615' }, 'from_position must be a whole number from 0 to 9223372036854775807'],
    [{ tenantId: 'x'.repeat(257) }, 'tenant_id must be at most 256 characters'],
    [{ tenantId: 'acme', fromPosition: '1.5' }, 'from_position must be a whole number'],
    [{ tenantId: 'acme', types: ['RunCompleted', 'ToolCalled'] }, 'types: "ToolCalled" not one of'],
  ])('refuses %j naming the field', (request, message) => {
    const result = checkSubscriptionRequest(request);
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.error).toContain(message);
  });
});
