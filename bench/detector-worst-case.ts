/**
 * The worst-case cost of each redaction detector: text made of near-matches
 * (what an attacker would send to make a pattern backtrack), at 1 KB,
 * 100 KB and 1 MB, timed through redactText with only that detector on.
 * A linear detector costs about the same per KB at every size; the growth
 * column is the cost per KB at 1 MB over the cost per KB at 1 KB.
 *
 *   npm run bench:detectors [-- --sizes 1,100,1000]
 *
 * The last line printed is one JSON object with the figures.
 */
import { parseArgs } from 'node:util';
import { DETECTOR_KINDS, type DetectorKind } from '../libs/domain/src/redaction/detectors';
import { redactText } from '../libs/domain/src/redaction/redact-text';

/** Near-matches per detector: each piece almost matches, and repeated it gives a pattern the most to try. */
const NEAR_MATCHES: Record<DetectorKind, Array<string | ((bytes: number) => string)>> = {
  email: ['@a.', 'a@', 'a.a.a.a.', 'a@a.a', (bytes) => `${'a.'.repeat(bytes / 4)}@${'a.'.repeat(bytes / 4)}`],
  jwt: ['-eyJ', 'eyJaaaaaa.', 'eyJaaaaaa.eyJ', (bytes) => `${'-eyJ'.repeat(bytes / 8)}.eyJaaaaaaaa.${'-eyJ'.repeat(bytes / 8)}`],
  secret: [
    '-----BEGIN PRIVATE KEY-----',
    '-----BEGIN RSA A A A A ',
    'sk-',
    'password=',
    'bearer ',
    'api_key: ',
    'ghp_',
    (bytes) =>
      `${'-----BEGIN PRIVATE KEY-----'.repeat(bytes / 60)}-----END PRIVATE KEY-----${'-----BEGIN PRIVATE KEY-----'.repeat(bytes / 60)}`,
  ],
  iban: ['DE00 ', 'DE89 3704 '],
  payment_card: ['4111 ', '4-1-1-1-'],
  ip: ['1.1.', '1:1:', 'f::'],
  phone: ['+1 2', '(12) ', '+44 20 '],
};

function textOf(piece: string | ((bytes: number) => string), bytes: number): string {
  if (typeof piece === 'function') return piece(bytes);
  return piece.repeat(Math.ceil(bytes / piece.length)).slice(0, bytes);
}

function timeMs(work: () => void): number {
  // The best of a few runs: the figure is the detector's cost, not a pause of the collector.
  let best = Number.POSITIVE_INFINITY;
  for (let i = 0; i < 3; i += 1) {
    const started = process.hrtime.bigint();
    work();
    best = Math.min(best, Number(process.hrtime.bigint() - started) / 1e6);
  }
  return best;
}

const { values } = parseArgs({ options: { sizes: { type: 'string', default: '1,100,1000' } } });
const sizesKb = values.sizes!.split(',').map(Number);

const figures = DETECTOR_KINDS.map((kind) => {
  const only = new Set([kind]);
  // For each size, the worst of the detector's near-match texts.
  const usPerKb = sizesKb.map((kb) => {
    const worstMs = Math.max(...NEAR_MATCHES[kind].map((piece) => timeMs(() => redactText(textOf(piece, kb * 1024), only))));
    return Number(((worstMs * 1000) / kb).toFixed(2));
  });
  return { kind, sizesKb, usPerKb, growth: Number((usPerKb[usPerKb.length - 1] / Math.max(0.01, usPerKb[0])).toFixed(1)) };
});

for (const f of figures) {
  const cells = f.sizesKb.map((kb, i) => `${kb} KB: ${f.usPerKb[i].toFixed(2)} µs/KB`).join('   ');
  console.log(`${f.kind.padEnd(13)} ${cells}   growth x${f.growth}`);
}
console.log(JSON.stringify(figures));
