import type { StoredToolEvent, ToolEventType } from '@toolhistory/contract';
import { DETECTOR_KINDS } from '../redaction/detectors';

/** What a recorded batch held, for counting: bounded keys only (no ids, no paths). */
export interface RecordedSummary {
  byType: Partial<Record<ToolEventType, number>>;
  /**
   * Redaction markers applied, by kind: each detector's kind, `json_path`
   * for policy masks (the paths themselves are the operator's, unbounded),
   * `truncated`, and `persist_metadata` / `persist_none` for payloads not
   * kept.
   */
  redactions: Record<string, number>;
}

const KNOWN_KINDS: ReadonlySet<string> = new Set([...DETECTOR_KINDS, 'truncated']);

export function redactionKind(marker: string): string {
  if (KNOWN_KINDS.has(marker)) return marker;
  return marker.startsWith('$') ? 'json_path' : 'other';
}

export const emptySummary = (): RecordedSummary => ({ byType: {}, redactions: {} });

/** Summarizes events as they were recorded (after redaction). */
export function summarizeRecorded(events: readonly StoredToolEvent[]): RecordedSummary {
  const summary = emptySummary();
  for (const event of events) {
    summary.byType[event.type] = (summary.byType[event.type] ?? 0) + 1;
    const note = event.redaction;
    if (!note) continue;
    if (note.persist !== 'full') bump(summary.redactions, `persist_${note.persist}`, 1);
    for (const [marker, count] of Object.entries(note.counts)) bump(summary.redactions, redactionKind(marker), count);
  }
  return summary;
}

/** Adds `more` into `total`. */
export function addSummary(total: RecordedSummary, more: RecordedSummary): void {
  for (const [type, n] of Object.entries(more.byType)) bump(total.byType as Record<string, number>, type, n);
  for (const [kind, n] of Object.entries(more.redactions)) bump(total.redactions, kind, n);
}

function bump(counts: Record<string, number>, key: string, by: number): void {
  counts[key] = (counts[key] ?? 0) + by;
}
