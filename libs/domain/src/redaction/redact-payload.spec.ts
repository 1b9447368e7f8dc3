import { truncationMarker } from '@toolhistory/contract';
import fc from 'fast-check';
import { DETECTOR_KINDS } from './detectors';
import { parseJsonPath, PathStep } from './json-path';
import { MAX_REDACTION_DEPTH, redactPayload } from './redact-payload';

const path = (p: string): { path: string; steps: PathStep[] } => {
  const parsed = parseJsonPath(p);
  if (!parsed.ok) throw new Error(parsed.error);
  return { path: p, steps: parsed.steps };
};
const ALL = new Set(DETECTOR_KINDS);

describe('parseJsonPath', () => {
  it.each(['$.card.number', '$.customers[*].email', "$['x-api-key']", '$.items[0].price', '$.*.secret'])('accepts %s', (p) => {
    expect(parseJsonPath(p).ok).toBe(true);
  });

  it.each([
    ['card.number', 'must start with $'],
    ['$', 'names the whole document'],
    ['$.a[?(@.x)]', 'cannot read'],
    ['$..email', 'cannot read'],
  ])('rejects %s, saying why', (p, why) => {
    const parsed = parseJsonPath(p);
    expect(parsed.ok ? '' : parsed.error).toContain(why);
  });
});

describe('redactPayload', () => {
  it('masks named paths with typed markers, leaving everything else', () => {
    const counts = {};
    const input = {
      card: { number: '4111111111111111', expiry: '12/29' },
      customers: [
        { email: 'a@example.com', id: 1 },
        { email: 'b@example.com', id: 2 },
      ],
    };
    const out = redactPayload(input, { maskPaths: [path('$.card.number'), path('$.customers[*].email')], detectors: new Set() }, counts);
    expect(out).toEqual({
      card: { number: '[REDACTED:$.card.number]', expiry: '12/29' },
      customers: [
        { email: '[REDACTED:$.customers[*].email]', id: 1 },
        { email: '[REDACTED:$.customers[*].email]', id: 2 },
      ],
    });
    expect(counts).toEqual({ '$.card.number': 1, '$.customers[*].email': 2 });
    expect(input.card.number).toBe('4111111111111111');
  });

  it('keeps a member named __proto__ as a member, where it stands, whether masked or walked', () => {
    const input = JSON.parse('{"a":1,"__proto__":{"token":"x","note":"ann@example.com"},"z":2}') as Record<string, unknown>;
    const walked = redactPayload(input, { maskPaths: [], detectors: ALL });
    expect(JSON.stringify(walked)).toBe('{"a":1,"__proto__":{"token":"x","note":"[REDACTED:email]"},"z":2}');
    expect(Object.getPrototypeOf(walked)).toBe(Object.prototype);
    const masked = redactPayload(input, { maskPaths: [path("$['__proto__'].token")], detectors: new Set() });
    expect(JSON.stringify(masked)).toBe(`{"a":1,"__proto__":{"token":"[REDACTED:$['__proto__'].token]","note":"ann@example.com"},"z":2}`);
  });

  it('finds values in any string, also inside JSON held in a string', () => {
    const counts = {};
    const out = redactPayload(
      { body: '{"contact":"jane@example.com","auth":"Bearer abcdefghijklmnopqrstuvwxyz"}', list: ['call +44 20 7946 0958'] },
      { maskPaths: [], detectors: ALL },
      counts,
    );
    expect(out).toEqual({ body: '{"contact":"[REDACTED:email]","auth":"Bearer [REDACTED:secret]"}', list: ['call [REDACTED:phone]'] });
    expect(counts).toEqual({ email: 1, secret: 1, phone: 1 });
  });

  it('cuts a long result with a visible marker', () => {
    const counts = {};
    const out = redactPayload({ log: 'x'.repeat(5_000) }, { maskPaths: [], detectors: new Set(), maxChars: 100 }, counts);
    const text = JSON.stringify({ log: 'x'.repeat(5_000) });
    expect(out).toBe(text.slice(0, 100) + truncationMarker(text.length - 100));
    expect(String(out)).toMatch(/…\[truncated 4,910 chars\]$/);
    expect(counts).toEqual({ truncated: 1 });
  });

  it('walks a hostile depth without exhausting the stack, dropping what lies below the bound for a marker', () => {
    let deep: unknown = 'jane@example.com';
    for (let i = 0; i < 50_000; i += 1) deep = [deep];
    const counts = {};
    const out = redactPayload({ top: 'call +44 20 7946 0958', deep }, { maskPaths: [], detectors: ALL }, counts);
    expect(counts).toEqual({ phone: 1, nesting: 1 });
    // The payload object is level 1; its arrays fill the levels up to the bound, then the marker.
    let level: unknown = (out as { deep: unknown }).deep;
    let levels = 1;
    while (Array.isArray(level)) {
      level = level[0];
      levels += 1;
    }
    expect(level).toBe('[REDACTED:nesting]');
    expect(levels).toBe(MAX_REDACTION_DEPTH);
    expect(() => JSON.stringify(out)).not.toThrow();
  });

  it('never cuts a marker in half, so a second pass does not read half a marker as a secret', () => {
    const rule = { maskPaths: [], detectors: ALL, maxChars: 30 };
    const once = redactPayload({ note: 'ok', x: 'password=hunter22' }, rule);
    expect(once).toBe('{"note":"ok","x":"password=' + truncationMarker(19));
    const counts = {};
    expect(redactPayload(once, rule, counts)).toBe(once);
    expect(counts).toEqual({});
  });

  it('redacts what a cut leaves when the cut itself makes a match', () => {
    // Seventeen digits are no card; their first sixteen are a valid Visa number.
    const counts = {};
    const out = redactPayload('4111 1111 1111 1111 2 and more', { maskPaths: [], detectors: ALL, maxChars: 19 }, counts);
    expect(out).toBe('[REDACTED:payment_card]' + truncationMarker(11));
    expect(counts).toEqual({ payment_card: 1, truncated: 1 });
  });

  it('is idempotent: a second pass changes nothing and counts nothing', () => {
    const planted = fc.constantFrom(
      'jane@example.com',
      '4111 1111 1111 1111',
      'DE89 3704 0044 0532 0130 00',
      'sk-proj-abcdefghijklmnopqrstuvwxyz012345',
      '10.0.0.1',
      'password=hunter22',
      '+44 20 7946 0958',
      'plain words',
    );
    const json = fc.letrec((tie) => ({
      value: fc.oneof(
        { depthSize: 'small' },
        planted,
        fc.string({ maxLength: 20 }),
        fc.integer(),
        fc.boolean(),
        fc.array(tie('value'), { maxLength: 3 }),
        fc.dictionary(fc.constantFrom('card', 'email', 'note', 'x'), tie('value'), { maxKeys: 3 }),
      ),
    })).value;
    // Limits from tiny to roomy, so cuts land inside markers, secrets and numbers.
    const rules = fc
      .integer({ min: 1, max: 300 })
      .map((maxChars) => ({ maskPaths: [path('$.card'), path('$.*.email')], detectors: ALL, maxChars }));
    fc.assert(
      fc.property(json, rules, (value, rule) => {
        const once = redactPayload(value, rule);
        const counts = {};
        expect(redactPayload(once, rule, counts)).toEqual(once);
        expect(counts).toEqual({});
      }),
      { numRuns: 2_000 },
    );
  });
});
