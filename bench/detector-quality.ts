/**
 * Precision and recall of each redaction detector on its labelled corpus
 * (libs/domain/src/redaction/detector-corpus.fixture.ts).
 *
 *   npm run eval:detectors
 *
 * The last line printed is one JSON object with the figures.
 */
import { DETECTOR_KINDS } from '../libs/domain/src/redaction/detectors';
import { detectorCorpus } from '../libs/domain/src/redaction/detector-corpus.fixture';
import { redactText } from '../libs/domain/src/redaction/redact-text';

const figures = DETECTOR_KINDS.map((kind) => {
  const { positives, negatives } = detectorCorpus(kind);
  const only = new Set([kind]);
  const tp = positives.filter((t) => redactText(t, only) !== t).length;
  const fp = negatives.filter((t) => redactText(t, only) !== t).length;
  return {
    kind,
    positives: positives.length,
    negatives: negatives.length,
    precision: Number((tp / Math.max(1, tp + fp)).toFixed(4)),
    recall: Number((tp / positives.length).toFixed(4)),
  };
});
for (const f of figures) {
  console.log(
    `${f.kind.padEnd(13)} positives ${f.positives}  negatives ${f.negatives}  precision ${f.precision.toFixed(4)}  recall ${f.recall.toFixed(4)}`,
  );
}
console.log(JSON.stringify(figures));
