import type { DetectorKind } from './detectors';
import type { PathStep } from './json-path';
import { replaceAtPath } from './json-path';
import { redactionMarker, redactText, RedactionCounts } from './redact-text';

export interface PayloadRedactionRule {
  /** Paths whose values become `[REDACTED:<path>]`, already parsed. */
  maskPaths: ReadonlyArray<{ path: string; steps: PathStep[] }>;
  detectors: ReadonlySet<DetectorKind>;
  /** Longer strings are cut, with a visible marker; undefined = no limit. */
  maxChars?: number;
}

export function truncationMarker(removed: number): string {
  return `…[truncated ${removed.toLocaleString('en-US')} chars]`;
}

const TRUNCATED = /…\[truncated [\d,]+ chars\]$/;

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
  current = mapStrings(current, (s) => redactText(s, rule.detectors, counts));
  if (rule.maxChars !== undefined) current = truncate(current, rule.maxChars, counts);
  return current;
}

/**
 * Applies `f` to every string value and object key, and to numbers written
 * as text (a card number sent as a JSON number is still a card number).
 * Keys that become equal after redaction get a suffix, so no value is lost.
 */
function mapStrings(value: unknown, f: (s: string) => string): unknown {
  if (typeof value === 'string') return f(value);
  if (typeof value === 'number') {
    const text = String(value);
    const redacted = f(text);
    return redacted === text ? value : redacted;
  }
  if (Array.isArray(value)) return value.map((v) => mapStrings(v, f));
  if (typeof value === 'object' && value !== null) {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) {
      let key = f(k);
      for (let n = 2; key !== k && Object.hasOwn(out, key); n += 1) key = `${f(k)} (${n})`;
      out[key] = mapStrings(v, f);
    }
    return out;
  }
  return value;
}

/** A result longer than the limit (as text) is kept as a cut string with a visible marker. */
function truncate(value: unknown, maxChars: number, counts: RedactionCounts): unknown {
  const text = typeof value === 'string' ? value : JSON.stringify(value);
  if (text.length <= maxChars || (typeof value === 'string' && TRUNCATED.test(value))) return value;
  counts.truncated = (counts.truncated ?? 0) + 1;
  return text.slice(0, maxChars) + truncationMarker(text.length - maxChars);
}
