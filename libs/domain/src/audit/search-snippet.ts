import { REDACTION_MARKER, redactionMarker } from '../redaction/redact-text';
import type { InvocationRecord } from './invocation-listing';

/** Where one excerpt of a snippet ends and the next begins (SearchHit.snippet). */
export const FRAGMENT_DELIMITER = ' … ';
/** `[REDACTED:`: what every marker starts with. */
const MARKER_HEAD = redactionMarker('').slice(0, -1);
/** Matched words are wrapped in ** **; a marker's parts can be among them. */
const HIGHLIGHT = /\*\*/g;

/**
 * A snippet whose excerpts never show part of a redaction marker. The
 * excerpts are cut at word boundaries, and a marker is several words
 * (`[REDACTED:email]`: `REDACTED`, `email`), so an excerpt can begin or end
 * inside one. A partial marker at an excerpt's edge is completed from the
 * markers the invocation holds when only one fits, and dropped otherwise.
 */
export function wholeRedactionMarkers(snippet: string, invocation: Pick<InvocationRecord, 'arguments' | 'result'>): string {
  if (!snippet.includes('REDACTED') && !snippet.includes(']')) return snippet;
  const markers = markersIn(invocation);
  return snippet
    .split(FRAGMENT_DELIMITER)
    .map((fragment) => completeEnd(completeStart(fragment, markers), markers))
    .filter((fragment) => fragment.length > 0)
    .join(FRAGMENT_DELIMITER);
}

function markersIn(invocation: Pick<InvocationRecord, 'arguments' | 'result'>): string[] {
  const text = [invocation.arguments, invocation.result]
    .map((payload) => (typeof payload === 'string' ? payload : JSON.stringify(payload ?? null)))
    .join('\n');
  return [...new Set(text.match(REDACTION_MARKER) ?? [])];
}

/** An excerpt that begins after a marker's `[`: the rest of that marker, up to its `]`, is made whole or taken out. */
function completeStart(fragment: string, markers: readonly string[]): string {
  const close = fragment.indexOf(']');
  const open = fragment.indexOf('[');
  if (close < 0 || (open >= 0 && open < close)) return fragment;
  const head = fragment.slice(0, close + 1);
  const plain = head.replace(HIGHLIGHT, '');
  if (plain.includes(' ')) return fragment;
  const fits = markers.filter((marker) => marker.endsWith(plain) && marker !== plain);
  if (fits.length === 1) return fits[0].slice(0, fits[0].length - plain.length) + fragment;
  // Not the tail of any marker here (an ordinary `]`), or ambiguous: leave ordinary text alone, drop an ambiguous tail.
  return fits.length === 0 ? fragment : fragment.slice(close + 1).trimStart();
}

/** An excerpt that ends inside a marker: the marker is made whole or taken out. */
function completeEnd(fragment: string, markers: readonly string[]): string {
  const open = fragment.lastIndexOf('[');
  if (open < 0 || fragment.indexOf(']', open) >= 0) return fragment;
  const tail = fragment.slice(open);
  const plain = tail.replace(HIGHLIGHT, '');
  if (!MARKER_HEAD.startsWith(plain.slice(0, MARKER_HEAD.length)) || /\s/.test(plain)) return fragment;
  const fits = markers.filter((marker) => marker.startsWith(plain) && marker !== plain);
  if (fits.length === 1) return fragment + fits[0].slice(plain.length);
  return fragment.slice(0, open).trimEnd();
}

/** Characters shown on each side of a substring match in its snippet. */
export const SUBSTRING_CONTEXT_CHARS = 40;

/**
 * The snippet of a substring hit: around the first match in each given
 * text (the searched text of each field it matched in, in order), the
 * matched text wrapped in ** **, on one line. Case is folded as
 * JavaScript's case-insensitive expressions do; a text where that finds no
 * match (a rare letter PostgreSQL folds otherwise) gives no excerpt, and
 * when none does the snippet is the start of the first text.
 */
export function substringSnippet(texts: readonly string[], query: string): string {
  const pattern = new RegExp(query.replace(/[\\^$.*+?()[\]{}|]/g, '\\$&'), 'iu');
  const oneLine = (text: string) => text.replace(/\s+/g, ' ');
  const excerpts = texts.flatMap((text) => {
    const found = pattern.exec(text);
    if (!found) return [];
    const start = codePointBoundary(text, found.index - SUBSTRING_CONTEXT_CHARS);
    const end = codePointBoundary(text, found.index + found[0].length + SUBSTRING_CONTEXT_CHARS);
    return [
      `${oneLine(text.slice(start, found.index))}**${oneLine(found[0])}**${oneLine(text.slice(found.index + found[0].length, end))}`.trim(),
    ];
  });
  if (excerpts.length > 0) return excerpts.join(FRAGMENT_DELIMITER);
  const first = texts[0] ?? '';
  return oneLine(first.slice(0, codePointBoundary(first, 2 * SUBSTRING_CONTEXT_CHARS))).trim();
}

/** `index` clamped into the text and moved off the middle of a surrogate pair. */
function codePointBoundary(text: string, index: number): number {
  const clamped = Math.max(0, Math.min(text.length, index));
  const code = text.charCodeAt(clamped);
  return clamped > 0 && clamped < text.length && code >= 0xdc00 && code <= 0xdfff ? clamped - 1 : clamped;
}
