import { FAILED_CHECKS_BEFORE_UNREACHABLE, servingAfter } from './grpc-health.service';

describe('health: busy is not down', () => {
  it('serves only once both dependencies answered', () => {
    expect(servingAfter('NOT_SERVING', { database: 0, broker: 0 })).toBe('SERVING');
    expect(servingAfter('NOT_SERVING', { database: 1, broker: 0 })).toBe('NOT_SERVING');
    expect(servingAfter('NOT_SERVING', { database: 0, broker: 3 })).toBe('NOT_SERVING');
  });

  it('stays SERVING through one late or failed check (a busy event loop), and stops once a dependency keeps failing', () => {
    expect(FAILED_CHECKS_BEFORE_UNREACHABLE).toBe(2);
    expect(servingAfter('SERVING', { database: 1, broker: 0 })).toBe('SERVING');
    expect(servingAfter('SERVING', { database: 0, broker: 1 })).toBe('SERVING');
    expect(servingAfter('SERVING', { database: 2, broker: 0 })).toBe('NOT_SERVING');
    expect(servingAfter('SERVING', { database: 0, broker: 2 })).toBe('NOT_SERVING');
  });
});
