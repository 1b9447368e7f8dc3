import type { ConversationChange, PositionedChange, WatchedConversationUpdate } from './conversation-watch';
import { eventsToReport, positionedChangesOf } from './conversation-watch';

/**
 * The watches of one conversation share its reads
 * (docs/adr/024-watch-a-conversation.md): one read at a time reads the
 * events after the lowest position a watch has been given, and each watch
 * takes the changes beyond its own position. A notification that comes
 * while a read is under way asks for one more read after it, however many
 * come. These rules say when to read, from where, and who takes what.
 */

/** What one shared read found: the changes of the events after `after`, up to `upTo` (the event count its rows include). */
export interface ChangeBatch {
  after: number;
  upTo: number;
  /** In stream order. */
  changes: PositionedChange[];
}

export interface SharedWatch {
  /** The last stream position this watch has been given (its snapshot's event count at first); null while its snapshot is read. */
  position: number | null;
  /** False while its snapshot is read, or while it holds more changes than it may (it takes again once it has caught up). */
  taking: boolean;
}

export interface SharedReads {
  watches: Readonly<Record<string, SharedWatch>>;
  reading: boolean;
  /** Something may have changed since the read under way (or the last one) began: read once no read is under way. */
  wanted: boolean;
}

export const NO_SHARED_READS: SharedReads = { watches: {}, reading: false, wanted: false };

/** A watch follows the conversation before it reads its snapshot, so nothing committed meanwhile goes unread. */
export function watchJoined(reads: SharedReads, watch: string): SharedReads {
  return { ...reads, watches: { ...reads.watches, [watch]: { position: null, taking: false } } };
}

/**
 * The watch takes changes after `position` (its snapshot's event count, or
 * where it stopped when it paused). A read is wanted: the reads under way
 * or done may have started past that position.
 */
export function watchTaking(reads: SharedReads, watch: string, position?: number): SharedReads {
  const current = reads.watches[watch];
  if (!current) return reads;
  const from = position ?? current.position;
  if (from === null) throw new Error(`watch ${watch} has no position to take changes from`);
  return { ...reads, wanted: true, watches: { ...reads.watches, [watch]: { position: from, taking: true } } };
}

/** The watch takes no changes until it takes again (keeping its position). */
export function watchPaused(reads: SharedReads, watch: string): SharedReads {
  const current = reads.watches[watch];
  if (!current) return reads;
  return { ...reads, watches: { ...reads.watches, [watch]: { ...current, taking: false } } };
}

export function watchLeft(reads: SharedReads, watch: string): SharedReads {
  if (!(watch in reads.watches)) return reads;
  const watches = { ...reads.watches };
  delete watches[watch];
  return { ...reads, watches };
}

export function changeNotified(reads: SharedReads): SharedReads {
  return reads.wanted ? reads : { ...reads, wanted: true };
}

/** Whether no watch follows the conversation and no read is under way: it can be forgotten. */
export const unfollowed = (reads: SharedReads): boolean => !reads.reading && Object.keys(reads.watches).length === 0;

/**
 * The read to start now, if one is wanted and none is under way: after the
 * lowest position among the watches taking changes. None while no watch
 * takes changes (a watch that starts taking asks for one).
 */
export function nextRead(reads: SharedReads): { reads: SharedReads; after: number } | null {
  if (reads.reading || !reads.wanted) return null;
  let after: number | null = null;
  for (const watch of Object.values(reads.watches)) {
    if (watch.taking && watch.position !== null) after = after === null ? watch.position : Math.min(after, watch.position);
  }
  if (after === null) return null;
  return { reads: { ...reads, reading: true, wanted: false }, after };
}

/**
 * What each watch taking changes takes of a read's batch: the changes after
 * its position, in order; its position then becomes the batch's count. A
 * watch whose position lies before the batch's start (it began taking
 * while the read was under way) takes nothing and waits for the next read,
 * which starts from its position: it never skips an event.
 */
export function readEnded(
  reads: SharedReads,
  batch: ChangeBatch,
): { reads: SharedReads; deliveries: Array<{ watch: string; changes: ConversationChange[] }> } {
  const watches: Record<string, SharedWatch> = {};
  const deliveries: Array<{ watch: string; changes: ConversationChange[] }> = [];
  let wanted = reads.wanted;
  for (const [id, watch] of Object.entries(reads.watches)) {
    if (!watch.taking || watch.position === null) {
      watches[id] = watch;
    } else if (watch.position < batch.after) {
      watches[id] = watch;
      wanted = true;
    } else {
      const position = watch.position;
      const changes = batch.changes.filter((c) => c.streamPosition > position).map((c) => c.change);
      if (changes.length > 0) deliveries.push({ watch: id, changes });
      watches[id] = { ...watch, position: Math.max(position, batch.upTo) };
    }
  }
  return { reads: { watches, reading: false, wanted }, deliveries };
}

/** The read failed: the watches that had a position end with its error (the caller drops them); the others read their own snapshot still. */
export function readFailed(reads: SharedReads): { reads: SharedReads; ended: string[] } {
  const watches: Record<string, SharedWatch> = {};
  const ended: string[] = [];
  for (const [id, watch] of Object.entries(reads.watches)) {
    if (watch.position === null) watches[id] = watch;
    else ended.push(id);
  }
  return { reads: { watches, reading: false, wanted: reads.wanted }, ended };
}

/** A read's update as the batch the watches share: each event after `after` the rows include, as its change. */
export function changeBatchOf(after: number, update: WatchedConversationUpdate): ChangeBatch {
  const events = eventsToReport(update.events, after, update.eventCount);
  return { after, upTo: update.eventCount, changes: positionedChangesOf(events, update) };
}
