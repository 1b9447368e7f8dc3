import { TRUNCATION_TAIL } from '@toolhistory/contract';
import { DETECTORS, DetectorKind } from './detectors';

export type RedactionCounts = Partial<Record<string, number>>;

export const redactionMarker = (label: string): string => `[REDACTED:${label}]`;

/**
 * A marker in a text (its label at most 80 characters). Markers already in a
 * text are left alone, so redacting twice equals redacting once. Global: copy
 * it (`new RegExp(REDACTION_MARKER)`) to walk a text with exec.
 */
export const REDACTION_MARKER = /\[REDACTED:[^\]]{1,80}\]/g;
const MIN_MATCH_LENGTH = 6;

/**
 * Replaces every detected value of the enabled kinds by `[REDACTED:<kind>]`
 * and counts them. Pure and deterministic.
 */
export function redactText(text: string, kinds: ReadonlySet<DetectorKind>, counts: RedactionCounts = {}): string {
  // Nothing any detector finds is shorter than this ("a@b.io", "1.2.3.4"): short keys and words skip the scan.
  if (kinds.size === 0 || text.length < MIN_MATCH_LENGTH) return text;
  // A cut text's tail marker is not data (its digits are not a phone number); what it follows is redacted as it was before the cut was marked.
  const tail = text.endsWith(' chars]') ? TRUNCATION_TAIL.exec(text) : null;
  if (tail) return redactText(text.slice(0, tail.index), kinds, counts) + tail[0];
  if (!text.includes('[REDACTED:')) return redactPart(text, kinds, counts);
  // Split around existing markers so no detector sees (or breaks) them.
  const parts = text.split(REDACTION_MARKER);
  const markers = text.match(REDACTION_MARKER) ?? [];
  let out = '';
  parts.forEach((part, i) => {
    out += redactPart(part, kinds, counts);
    if (i < markers.length) out += markers[i];
  });
  return out;
}

function redactPart(text: string, kinds: ReadonlySet<DetectorKind>, counts: RedactionCounts): string {
  let current = text;
  for (const detector of DETECTORS) {
    if (!kinds.has(detector.kind) || (detector.hint && !detector.hint(current))) continue;
    const replace = (match: string, kept: string): string => {
      const value = match.slice(kept.length);
      // A value an earlier detector already replaced (`api_key=[REDACTED:secret]`) stays as it is.
      if (value.startsWith('[REDACTED:') || (detector.confirm && !detector.confirm(value))) return match;
      counts[detector.kind] = (counts[detector.kind] ?? 0) + 1;
      return kept + redactionMarker(detector.kind);
    };
    const { pattern } = detector;
    if (pattern instanceof RegExp) {
      pattern.lastIndex = 0;
      current = current.replace(pattern, (match: string, prefix: unknown) => replace(match, detector.keepsPrefix ? String(prefix) : ''));
    } else {
      current = replaceSpans(current, pattern.spans(current), (match) => replace(match, ''));
    }
  }
  return current;
}

/** Replaces non-overlapping spans, given in order, in one pass. */
function replaceSpans(text: string, spans: Iterable<[number, number]>, replace: (match: string) => string): string {
  let out = '';
  let at = 0;
  for (const [start, end] of spans) {
    out += text.slice(at, start) + replace(text.slice(start, end));
    at = end;
  }
  return at === 0 ? text : out + text.slice(at);
}
