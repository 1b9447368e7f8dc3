import { benignValues, detectorCorpus } from './detector-corpus.fixture';
import fc from 'fast-check';
import { DETECTOR_KINDS, DetectorKind, ibanValid, jsonWebTokens, luhnValid, paymentCardValid, privateKeyBlocks } from './detectors';
import { redactText } from './redact-text';

const only = (kind: DetectorKind) => new Set([kind]);
const ALL = new Set(DETECTOR_KINDS);

function score(kind: DetectorKind) {
  const { positives, negatives } = detectorCorpus(kind);
  const truePositives = positives.filter((t) => redactText(t, only(kind)) !== t).length;
  const falsePositives = negatives.filter((t) => redactText(t, only(kind)) !== t).length;
  return {
    positives: positives.length,
    negatives: negatives.length,
    precision: truePositives / Math.max(1, truePositives + falsePositives),
    recall: truePositives / positives.length,
    missed: positives.filter((t) => redactText(t, only(kind)) === t).slice(0, 3),
    wronglyFlagged: negatives.filter((t) => redactText(t, only(kind)) !== t).slice(0, 3),
  };
}

describe('detectors', () => {
  it('checks cards with Luhn and network prefixes, IBANs with mod 97', () => {
    expect(luhnValid('4111111111111111')).toBe(true);
    expect(luhnValid('4111111111111112')).toBe(false);
    expect(paymentCardValid('4111 1111 1111 1111')).toBe(true);
    expect(paymentCardValid('9111111111111111')).toBe(false);
    expect(ibanValid('DE89 3704 0044 0532 0130 00')).toBe(true);
    expect(ibanValid('DE88 3704 0044 0532 0130 00')).toBe(false);
  });

  it.each(DETECTOR_KINDS.map((k) => [k]))('%s: at least 200 positives and 200 negatives, precision and recall of at least 0.95', (kind) => {
    const s = score(kind);
    expect(s.positives).toBeGreaterThanOrEqual(200);
    expect(s.negatives).toBeGreaterThanOrEqual(200);
    if (s.precision < 0.95 || s.recall < 0.95) {
      throw new Error(
        `${kind}: precision ${s.precision}, recall ${s.recall}; missed ${JSON.stringify(s.missed)}; wrongly flagged ${JSON.stringify(s.wronglyFlagged)}`,
      );
    }
    expect(s.precision).toBeGreaterThanOrEqual(0.95);
    expect(s.recall).toBeGreaterThanOrEqual(0.95);
  });

  it('never fires on UUIDs, ISO timestamps, order numbers, versions or hashes, with every detector on', () => {
    const flagged = benignValues(400).filter((t) => redactText(t, ALL) !== t);
    expect(flagged).toEqual([]);
  });

  it('replaces values with typed markers and counts them', () => {
    const counts = {};
    const text = 'mail jane@example.com, card 4111-1111-1111-1111, Bearer abcdefghijklmnopqrstuvwx, ip 10.1.2.3';
    expect(redactText(text, ALL, counts)).toBe(
      'mail [REDACTED:email], card [REDACTED:payment_card], Bearer [REDACTED:secret], ip [REDACTED:ip]',
    );
    expect(counts).toEqual({ email: 1, payment_card: 1, secret: 1, ip: 1 });
  });

  it('is idempotent: redacting twice equals redacting once', () => {
    for (const kind of DETECTOR_KINDS) {
      for (const text of detectorCorpus(kind).positives.slice(0, 50)) {
        const once = redactText(text, ALL);
        expect(redactText(once, ALL)).toBe(once);
      }
    }
  });
});

describe('the linear-time scanners find exactly what the patterns they replace found', () => {
  // The patterns as they were: right, but quadratic on near-matches.
  const OLD_JWT = /\beyJ[A-Za-z0-9_-]{5,}\.eyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{10,}/g;
  const OLD_PRIVATE_KEY = /-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY-----(?:.|\n|\r)*?-----END (?:[A-Z0-9]+ )*PRIVATE KEY-----/g;
  const OLD_EMAIL = /\b[A-Za-z0-9._%+-]+@(?:[A-Za-z0-9-]+\.)+[A-Za-z]{2,24}\b/g;
  const spansOf = (pattern: RegExp, text: string) => [...text.matchAll(pattern)].map((m) => [m.index!, m.index! + m[0].length]);
  const textOf = (pieces: string[]) => fc.array(fc.constantFrom(...pieces), { maxLength: 40 }).map((p) => p.join(''));

  it('JSON Web Tokens', () => {
    const pieces = ['eyJ', 'eyJhbGci', '.', '-', '_', 'a', 'abcdefghij', ' ', '"', 'x.eyJ'];
    fc.assert(
      fc.property(textOf(pieces), (text) => expect([...jsonWebTokens(text)]).toEqual(spansOf(OLD_JWT, text))),
      { numRuns: 3_000 },
    );
  });

  it('private key blocks', () => {
    const pieces = [
      '-----BEGIN PRIVATE KEY-----',
      '-----BEGIN RSA PRIVATE KEY-----',
      '-----END PRIVATE KEY-----',
      '-----END RSA PRIVATE KEY-----',
      'MIIE',
      '\n',
      '\\n',
      ' ',
      '-----BEGIN ',
      'PRIVATE KEY-----',
    ];
    fc.assert(
      fc.property(textOf(pieces), (text) => expect([...privateKeyBlocks(text)]).toEqual(spansOf(OLD_PRIVATE_KEY, text))),
      { numRuns: 3_000 },
    );
  });

  it('e-mail addresses of the lengths addresses have', () => {
    const pieces = ['a', 'jane', '.', '@', '-', 'example', 'com', ' ', '+tag', 'b.c'];
    const only = new Set(['email'] as const);
    fc.assert(
      fc.property(textOf(pieces), (text) => {
        const expected = text.replace(OLD_EMAIL, '[REDACTED:email]');
        expect(redactText(text, only)).toBe(expected);
      }),
      { numRuns: 3_000 },
    );
  });
});
