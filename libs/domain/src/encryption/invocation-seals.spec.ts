import fc from 'fast-check';
import { expiredPayloadFields, type InvocationSeals, PAYLOAD_FIELDS, type PayloadField, withPayloadsExpiredBy } from './invocation-seals';

interface Row {
  id: number;
  payloadSeals?: InvocationSeals | null;
  expiredPayloads?: PayloadField[];
  arguments?: unknown;
  result?: unknown;
  approvalRequestReason?: unknown;
  approvalDecisionReason?: unknown;
}

const HOUR = 3_600_000;
const T0 = Date.parse('2026-11-28T00:00:00Z');
const at = (ms: number) => new Date(ms).toISOString();
const seal = (expiresAtMs: number | null) => ({ key: 'k1', expiresAt: expiresAtMs === null ? null : at(expiresAtMs), data: 'x' });

/** What a row looks like at `nowMs`, row by row: the rule the function keeps (its fields past retention gone). */
function expectedAt(rows: readonly Row[], nowMs: number): Row[] {
  return rows.map((row) => {
    if (!row.payloadSeals) return row;
    const expired = expiredPayloadFields(row, nowMs);
    if (expired.length === (row.expiredPayloads?.length ?? 0)) return row;
    return { ...row, expiredPayloads: expired, ...Object.fromEntries(expired.map((f) => [f, f === 'arguments' ? {} : null])) };
  });
}

describe('withPayloadsExpiredBy', () => {
  const rows: Row[] = [
    { id: 1, payloadSeals: { arguments: seal(T0 + 2 * HOUR), result: seal(T0 + 5 * HOUR) }, arguments: { q: 1 }, result: 'r' },
    { id: 2, payloadSeals: null, arguments: { q: 2 } },
    { id: 3, payloadSeals: { result: seal(T0 + HOUR) }, expiredPayloads: ['result'], result: null },
    { id: 4, payloadSeals: { approvalRequestReason: seal(null) }, approvalRequestReason: 'why' },
  ];

  it.each<[string, number, Row[] | 'same']>([
    ['before any retention ends: the same rows', T0, 'same'],
    ['a field already swept does not count again', T0 + 90 * 60_000, 'same'],
    [
      'at the first end of retention: that field is gone',
      T0 + 2 * HOUR,
      [{ ...rows[0], expiredPayloads: ['arguments'], arguments: {} }, rows[1], rows[2], rows[3]],
    ],
    [
      'past every end: each field past its retention is gone, those without one stay',
      T0 + 6 * HOUR,
      [{ ...rows[0], expiredPayloads: ['arguments', 'result'], arguments: {}, result: null }, rows[1], rows[2], rows[3]],
    ],
  ])('%s', (_, nowMs, expected) => {
    const answer = withPayloadsExpiredBy(rows, nowMs);
    if (expected === 'same') expect(answer).toBe(rows);
    else expect(answer).toEqual(expected);
  });

  it('answers any rows at any moments as looking at each row every time would, however often it is asked', () => {
    const expiry = fc.option(
      fc.integer({ min: 0, max: 10 }).map((h) => T0 + h * HOUR),
      { nil: null },
    );
    const seals = fc.option(
      fc.dictionary(fc.constantFrom(...PAYLOAD_FIELDS), expiry.map(seal), { minKeys: 0, maxKeys: 4 }) as fc.Arbitrary<InvocationSeals>,
      { nil: null },
    );
    const row = fc.record({
      payloadSeals: seals,
      expiredPayloads: fc.subarray([...PAYLOAD_FIELDS]),
      result: fc.constant('r'),
    });
    const moments = fc.array(
      fc.integer({ min: -1, max: 11 }).map((h) => T0 + h * HOUR),
      { minLength: 1, maxLength: 6 },
    );
    fc.assert(
      fc.property(fc.array(row, { maxLength: 8 }), moments, (generated, nows) => {
        const asked = generated.map((r, id) => ({ id, ...r }));
        for (const nowMs of nows) {
          const expected = expectedAt(asked, nowMs);
          const answer = withPayloadsExpiredBy(asked, nowMs);
          expect(answer).toEqual(expected);
          // Unchanged rows come back as the same array, so a cached history still matches them.
          if (expected.every((r, i) => r === asked[i])) expect(answer).toBe(asked);
        }
      }),
    );
  });
});
