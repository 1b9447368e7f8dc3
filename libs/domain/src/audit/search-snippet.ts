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
