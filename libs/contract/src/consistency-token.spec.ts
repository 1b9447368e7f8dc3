import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import {
  type ConsistencyToken,
  formatConsistencyToken,
  isConsistencyToken,
  laterConsistencyToken,
  MAX_CONSISTENCY_TOKEN_LENGTH,
  parseConsistencyToken,
} from './consistency-token';

interface Vectors {
  valid: Array<{ token: string; kafka?: { topic: string; partition: number; offset: string }; position?: string }>;
  invalid: Array<{ token: string; why: string }>;
  later: Array<{ current: string | null; next: string; later: string }>;
}

// Shared with the Python client (clients/python/tests/unit): every client reads and writes tokens alike.
const vectors = JSON.parse(readFileSync(join(__dirname, '../test-vectors/consistency-tokens.json'), 'utf8')) as Vectors;

describe('consistency tokens (the shared vectors)', () => {
  it.each(vectors.valid.map((v) => [v.token, v] as const))('reads %s', (token, vector) => {
    const expected: ConsistencyToken = vector.kafka
      ? { kind: 'kafka', topic: vector.kafka.topic, partition: vector.kafka.partition, offset: BigInt(vector.kafka.offset) }
      : { kind: 'position', position: BigInt(vector.position!) };
    expect(parseConsistencyToken(token)).toEqual(expected);
    expect(formatConsistencyToken(expected)).toBe(token);
  });

  it.each(vectors.invalid.map((v) => [v.why, v.token] as const))('refuses %s', (_why, token) => {
    expect(isConsistencyToken(parseConsistencyToken(token))).toBe(false);
  });

  it.each(vectors.later.map((v) => [JSON.stringify([v.current, v.next]), v] as const))('the later of %s', (_name, v) => {
    expect(laterConsistencyToken(v.current ?? undefined, v.next)).toBe(v.later);
  });
});

describe('consistency tokens (properties)', () => {
  const topic = fc.stringMatching(/^[A-Za-z0-9._-]{1,40}$/);
  const token = fc.oneof(
    fc.record({
      kind: fc.constant('kafka' as const),
      topic,
      partition: fc.integer({ min: 0, max: 2_147_483_647 }),
      offset: fc.bigInt({ min: 0n, max: 9_223_372_036_854_775_807n }),
    }),
    fc.record({ kind: fc.constant('position' as const), position: fc.bigInt({ min: 1n, max: 9_223_372_036_854_775_807n }) }),
  );

  it('reads back every token it writes', () => {
    fc.assert(fc.property(token, (t) => expect(parseConsistencyToken(formatConsistencyToken(t))).toEqual(t)));
  });

  it('answers every text with a token or a reason, never throwing', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: MAX_CONSISTENCY_TOKEN_LENGTH + 10 }), (text) => {
        const parsed = parseConsistencyToken(text);
        if (isConsistencyToken(parsed)) expect(formatConsistencyToken(parsed)).toBe(text);
        else expect(parsed.invalid.length).toBeGreaterThan(0);
      }),
    );
  });

  it('keeps the higher offset of one partition whatever the order they come in', () => {
    fc.assert(
      fc.property(topic, fc.array(fc.bigInt({ min: 0n, max: 1_000_000n }), { minLength: 1, maxLength: 20 }), (t, offsets) => {
        const kept = offsets.reduce<string | undefined>(
          (current, o) => laterConsistencyToken(current, formatConsistencyToken({ kind: 'kafka', topic: t, partition: 3, offset: o })),
          undefined,
        );
        const max = offsets.reduce((a, b) => (a > b ? a : b));
        expect(kept).toBe(formatConsistencyToken({ kind: 'kafka', topic: t, partition: 3, offset: max }));
      }),
    );
  });
});
