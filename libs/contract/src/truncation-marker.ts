// No imports: the client package bundles this file, so that a producer and the service mark a cut text the same way.

/**
 * What a text cut to a size limit ends with, e.g. `…[truncated 4,900 chars]`:
 * the number of characters (UTF-16 code units, as JavaScript counts a
 * string's length) removed, with en-US thousands separators.
 */
export function truncationMarker(removed: number): string {
  return `…[truncated ${removed.toLocaleString('en-US')} chars]`;
}

/** The truncation marker at the very end of a cut text. */
export const TRUNCATION_TAIL = /…\[truncated [\d,]+ chars\]$/;
