import pino from 'pino';
import type { DataKeyStore, StoredDataKey } from '@toolhistory/domain';
import { RetentionSweeper, type RetentionSweepOutcome } from './retention-sweeper';
import { CryptoShreddingEraser } from '../erasure/crypto-shredding-eraser';

const key = (i: number): StoredDataKey => ({
  keyId: `k${i}`,
  tenantId: 't',
  conversationId: `c${i}`,
  expiresAt: '2026-01-01T00:00:00.000Z',
  via: [],
  kekId: 'k1',
  wrapped: 'x',
});

/** A key store that records what was asked of it, and hands out due keys in rounds. */
function keysDue(rounds: number[], steps: string[]): DataKeyStore {
  let next = 0;
  return {
    destroyExpired: async (now: string, limit: number) => {
      steps.push(`keys ${now} ${limit}`);
      const count = rounds[next++] ?? 0;
      return Array.from({ length: count }, (_, i) => key(next * 10_000 + i));
    },
    destroyConversation: async (tenantId: string, conversationId: string) => (steps.push(`destroy ${tenantId}/${conversationId}`), ['k7']),
  } as unknown as DataKeyStore;
}

describe('the retention sweeper', () => {
  it('removes payloads from the read model first, then destroys every due key, forgetting them, and counts both', async () => {
    const steps: string[] = [];
    const counted: RetentionSweepOutcome[] = [];
    const forgotten: string[] = [];
    const now = new Date('2026-01-02T00:00:00.000Z');
    const sweeper = new RetentionSweeper({
      expiry: {
        sweep: async (at) => {
          steps.push(`read model ${at.toISOString()}`);
          return { payloads: 5, invocations: 3, conversations: 2 };
        },
      },
      keys: keysDue([1_000, 2], steps),
      forget: (ids) => forgotten.push(...ids),
      counted: (outcome) => counted.push(outcome),
      log: pino({ level: 'silent' }),
      now: () => now,
    });
    const outcome = await sweeper.sweep();
    expect(steps).toEqual([`read model ${now.toISOString()}`, `keys ${now.toISOString()} 1000`, `keys ${now.toISOString()} 1000`]);
    expect(outcome).toEqual({ payloads: 5, invocations: 3, conversations: 2, keysDestroyed: 1_002 });
    expect(forgotten).toHaveLength(1_002);
    expect(counted).toEqual([outcome]);
  });

  it('destroys no key when the read model could not be swept: the next sweep does both', async () => {
    const steps: string[] = [];
    const sweeper = new RetentionSweeper({
      expiry: { sweep: async () => Promise.reject(new Error('database down')) },
      keys: keysDue([3], steps),
      forget: () => undefined,
      counted: () => undefined,
      log: pino({ level: 'silent' }),
    });
    await expect(sweeper.sweep()).rejects.toThrow('database down');
    expect(steps).toEqual([]);
  });
});

describe('crypto-shredding erasure', () => {
  it("destroys the conversation's keys once its rows are gone, forgets them, and names them in the outcome", async () => {
    const steps: string[] = [];
    const forgotten: string[] = [];
    const eraser = new CryptoShreddingEraser(
      { erase: async () => (steps.push('rows'), { erasedEvents: 3, erasedInvocations: 1 }) },
      keysDue([], steps),
      { forget: (ids) => forgotten.push(...ids) },
    );
    expect(await eraser.erase('t', 'c')).toEqual({ erasedEvents: 3, erasedInvocations: 1, destroyedKeys: ['k7'] });
    expect(steps).toEqual(['rows', 'destroy t/c']);
    expect(forgotten).toEqual(['k7']);
  });
});
