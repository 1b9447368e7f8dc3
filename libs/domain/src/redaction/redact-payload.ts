import { TRUNCATION_TAIL, truncationMarker } from '@toolhistory/contract';
import { setJsonMember } from './json-member';
import type { DetectorKind } from './detectors';
import type { PathStep } from './json-path';
import { replaceAtPath } from './json-path';
import { REDACTION_MARKER, redactionMarker, redactText, RedactionCounts } from './redact-text';

export interface PayloadRedactionRule {
  /** Paths whose values become `[REDACTED:<path>]`, already parsed. */
  maskPaths: ReadonlyArray<{ path: string; steps: PathStep[] }>;
  detectors: ReadonlySet<DetectorKind>;
  /** Longer strings are cut, with a visible marker; undefined = no limit. */
  maxChars?: number;
}

/**
 * Masks the named paths, then runs the detectors over every string (JSON held
 * in a string included, as text), then enforces the size limit on the
 * serialized result. Pure and idempotent: applying it to its own output
 * changes nothing and counts nothing new.
 */
export function redactPayload(value: unknown, rule: PayloadRedactionRule, counts: RedactionCounts = {}): unknown {
  let current = value;
  for (const { path, steps } of rule.maskPaths) {
    const masked = replaceAtPath(current, steps, redactionMarker(path));
    current = masked.value;
    if (masked.replaced > 0) counts[path] = (counts[path] ?? 0) + masked.replaced;
  }
  const detect = (s: string) => redactText(s, rule.detectors, counts);
  current = mapStrings(current, detect, counts);
  if (rule.maxChars !== undefined) current = truncate(current, rule.maxChars, detect, counts);
  return current;
}

/**
 * Deeper than any valid event nests (the contract allows 64 levels): what
 * lies below is dropped for a marker, so a hostile dead letter cannot
 * exhaust the stack of the walk or of JSON.stringify after it.
 */
export const MAX_REDACTION_DEPTH = 128;
const TOO_DEEP = redactionMarker('nesting');

/**
 * Applies `f` to every string value and object key, and to numbers written
 * as text (a card number sent as a JSON number is still a card number).
 * Keys that become equal after redaction get a suffix, so no value is lost.
 */
function mapStrings(value: unknown, f: (s: string) => string, counts: RedactionCounts, depth = 1): unknown {
  if (typeof value === 'string') return f(value);
  if (typeof value === 'number') {
    const text = String(value);
    const redacted = f(text);
    return redacted === text ? value : redacted;
  }
  if (typeof value !== 'object' || value === null) return value;
  if (depth > MAX_REDACTION_DEPTH) {
    counts.nesting = (counts.nesting ?? 0) + 1;
    return TOO_DEEP;
  }
  if (Array.isArray(value)) return value.map((v) => mapStrings(v, f, counts, depth + 1));
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) {
    let key = f(k);
    for (let n = 2; key !== k && Object.hasOwn(out, key); n += 1) key = `${f(k)} (${n})`;
    setJsonMember(out, key, mapStrings(v, f, counts, depth + 1));
  }
  return out;
}

/**
 * A result longer than the limit (as text) is kept as a cut string with a
 * visible marker. Idempotence needs two things here: the cut never splits a
 * redaction marker (half a marker is not a marker, and the detectors would
 * read what follows as a secret), and the kept text passes the detectors
 * again (a cut can turn clean text into a match, e.g. a longer digit run into
 * a valid card number), so that a second pass finds nothing new.
 */
function truncate(value: unknown, maxChars: number, detect: (s: string) => string, counts: RedactionCounts): unknown {
  const text = typeof value === 'string' ? value : JSON.stringify(value);
  if (text.length <= maxChars || (typeof value === 'string' && TRUNCATION_TAIL.test(value))) return value;
  counts.truncated = (counts.truncated ?? 0) + 1;
  const cut = cutOutsideMarkers(text, maxChars);
  return detect(text.slice(0, cut)) + truncationMarker(text.length - cut);
}

// A copy of its own: walked with exec from a lastIndex.
const MARKER_WALK = new RegExp(REDACTION_MARKER);

/** `at`, or the start of the redaction marker that `at` falls inside. */
function cutOutsideMarkers(text: string, at: number): number {
  const from = Math.max(0, at - 100);
  MARKER_WALK.lastIndex = from;
  for (let m = MARKER_WALK.exec(text); m !== null && m.index < at; m = MARKER_WALK.exec(text)) {
    if (m.index + m[0].length > at) return m.index;
  }
  return at;
}
