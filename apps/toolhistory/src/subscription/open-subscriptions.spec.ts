import { AppError, ErrorCode } from '@toolhistory/errors';
import { OpenSubscriptions } from './open-subscriptions';

const subscription = (tenantId: string) => ({ tenantId, endForShutdown: jest.fn() });

describe('OpenSubscriptions', () => {
  it('admits up to the limit per tenant, each tenant on its own', () => {
    const open = new OpenSubscriptions(2);
    const a1 = open.admit(subscription('a'));
    open.admit(subscription('a'));
    open.admit(subscription('b'));
    expect(() => open.admit(subscription('a'))).toThrow(expect.objectContaining({ code: ErrorCode.ResourceExhausted }));
    expect(open.count('a')).toBe(2);
    a1();
    a1();
    expect(open.count('a')).toBe(1);
    expect(() => open.admit(subscription('a'))).not.toThrow();
    expect(open.count()).toBe(3);
  });

  it('ends every stream on shutdown and admits no new one', () => {
    const open = new OpenSubscriptions(5);
    const streams = [subscription('a'), subscription('b'), subscription('b')];
    for (const s of streams) open.admit(s);
    expect(open.closeAll()).toBe(3);
    for (const s of streams) expect(s.endForShutdown).toHaveBeenCalledTimes(1);
    let refusal: unknown;
    try {
      open.admit(subscription('c'));
    } catch (error) {
      refusal = error;
    }
    expect(refusal).toBeInstanceOf(AppError);
    expect(refusal).toMatchObject({ retriable: true, message: 'server shutting down' });
  });
});
