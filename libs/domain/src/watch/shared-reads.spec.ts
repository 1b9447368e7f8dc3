import fc from 'fast-check';
import type { ToolEvent } from '@toolhistory/contract';
import type { InvocationRecord } from '../audit/invocation-listing';
import type { ConversationChange } from './conversation-watch';
import {
  type ChangeBatch,
  changeBatchOf,
  changeNotified,
  nextRead,
  NO_SHARED_READS,
  readEnded,
  readFailed,
  type SharedReads,
  unfollowed,
  watchJoined,
  watchLeft,
  watchPaused,
  watchTaking,
} from './shared-reads';

/** The change of stream position n (its `position` says which event it was). */
const changeAt = (n: number): ConversationChange => ({
  kind: 'run_ended',
  position: String(n),
  runId: 'r1',
  status: 'completed',
  endedAt: 't',
});
const batchOf = (after: number, upTo: number): ChangeBatch => ({
  after,
  upTo,
  changes: Array.from({ length: Math.max(0, upTo - after) }, (_, i) => ({
    streamPosition: after + i + 1,
    change: changeAt(after + i + 1),
  })),
});
const positionsIn = (changes: ConversationChange[]) => changes.map((c) => Number(c.position));

describe('the reads the watches of a conversation share', () => {
  it('reads after the lowest position among the watches taking changes, one read at a time', () => {
    let reads = watchJoined(watchJoined(watchJoined(NO_SHARED_READS, 'a'), 'b'), 'c');
    expect(nextRead(changeNotified(reads))).toBeNull(); // nobody takes changes yet
    reads = watchTaking(watchTaking(reads, 'a', 7), 'b', 4);
    const started = nextRead(reads)!;
    expect(started.after).toBe(4);
    expect(nextRead(changeNotified(started.reads))).toBeNull(); // one under way
  });

  it('coalesces the notifications that come during a read into one more read', () => {
    const started = nextRead(watchTaking(watchJoined(NO_SHARED_READS, 'a'), 'a', 0))!;
    let reads = changeNotified(changeNotified(changeNotified(started.reads)));
    reads = readEnded(reads, batchOf(0, 3)).reads;
    const again = nextRead(reads)!;
    expect(again.after).toBe(3);
    expect(nextRead(readEnded(again.reads, batchOf(3, 3)).reads)).toBeNull();
  });

  it.each([
    ['a watch at the batch start takes it all', 2, { after: 2, upTo: 5 }, [3, 4, 5], 5],
    ['a watch whose snapshot holds part of it takes the rest', 4, { after: 2, upTo: 5 }, [5], 5],
    ['a watch whose snapshot is newer than the batch takes nothing and keeps its position', 9, { after: 2, upTo: 5 }, [], 9],
    ['a watch before the batch start takes nothing yet (the next read starts from it)', 1, { after: 2, upTo: 5 }, [], 1],
  ])('%s', (_what, position, batch, taken, after) => {
    const started = nextRead(watchTaking(watchJoined(NO_SHARED_READS, 'a'), 'a', position))!;
    const { reads, deliveries } = readEnded({ ...started.reads, reading: true }, batchOf(batch.after, batch.upTo));
    expect(deliveries.flatMap((d) => positionsIn(d.changes))).toEqual(taken);
    expect(reads.watches.a.position).toBe(after);
    expect(reads.wanted).toBe(position < batch.after);
  });

  it('ends the watches that take changes when a read fails, not those still reading their snapshot', () => {
    const reads = watchTaking(watchJoined(watchJoined(NO_SHARED_READS, 'a'), 'b'), 'a', 0);
    const { reads: after, ended } = readFailed(nextRead(reads)!.reads);
    expect(ended).toEqual(['a']);
    expect(Object.keys(after.watches)).toEqual(['b']);
    expect(unfollowed(watchLeft(after, 'b'))).toBe(true);
  });

  it('turns a read into a batch of the events its rows include, each with its stream position', () => {
    const row = { runId: 'r1', pairKey: 'id:c1', toolCallId: 'c1', requestedAt: 't', resultRunId: null } as InvocationRecord;
    const event = (streamPosition: number, type: string) => ({
      globalPosition: String(100 + streamPosition),
      streamPosition,
      recordedAt: 't',
      event: { type, runId: 'r1', toolCallId: 'c1', roundIndex: 0, sequenceIndex: 0, occurredAt: 't' } as ToolEvent,
    });
    const batch = changeBatchOf(1, {
      eventCount: 3,
      erased: false,
      events: [event(2, 'ToolResultReceived'), event(3, 'RunCompleted'), event(4, 'RunFailed')],
      invocations: [row],
      runs: [],
    });
    expect(batch).toMatchObject({
      after: 1,
      upTo: 3,
      changes: [
        { streamPosition: 2, change: { kind: 'invocation_changed', position: '102' } },
        { streamPosition: 3, change: { kind: 'run_ended', position: '103' } },
      ],
    });
  });

  /**
   * A model of the service around these rules: events commit one by one;
   * each commit's notification arrives some time later; a watch joins, reads
   * its snapshot (at the count committed then), then takes changes; a read
   * starts, takes its own snapshot of the stream later, ends later still;
   * watches pause, resume and leave at any time. Whatever the interleaving,
   * once everything has settled every watch still there has been given each
   * event after its snapshot exactly once, in order, and one that left a
   * prefix of them.
   */
  it('gives each watch each event after its snapshot once, in order, for any interleaving of joins, reads and notifications', () => {
    const step = fc.oneof(
      fc.constant({ kind: 'commit' as const }),
      fc.constant({ kind: 'notice' as const }),
      fc.constant({ kind: 'join' as const }),
      fc.constant({ kind: 'read-snapshot' as const }),
      fc.constant({ kind: 'read-end' as const }),
      fc.constant({ kind: 'read-fail' as const }),
      fc.record({
        kind: fc.constantFrom('watch-snapshot' as const, 'watch-ready' as const, 'pause' as const, 'resume' as const, 'leave' as const),
        pick: fc.nat(),
      }),
    );
    fc.assert(
      fc.property(fc.array(step, { maxLength: 150, size: 'max' }), (steps) => {
        interface ModelWatch {
          id: string;
          snapshot: number | null;
          ready: boolean;
          paused: boolean;
          left: boolean;
          failed: boolean;
          given: number[];
        }
        let committed = 0;
        let notices = 0;
        let reads: SharedReads = NO_SHARED_READS;
        let read: { after: number; count: number | null } | null = null;
        const watches: ModelWatch[] = [];
        const live = () => watches.filter((w) => !w.left && !w.failed);

        const tryRead = () => {
          const started = nextRead(reads);
          if (!started) return;
          reads = started.reads;
          read = { after: started.after, count: null };
        };
        const act = (s: (typeof steps)[number]): void => {
          const pickFrom = (ws: ModelWatch[]) => ('pick' in s && ws.length > 0 ? ws[s.pick % ws.length] : undefined);
          switch (s.kind) {
            case 'commit':
              committed += 1;
              notices += 1;
              return;
            case 'notice':
              if (notices === 0) return;
              notices -= 1;
              reads = changeNotified(reads);
              return tryRead();
            case 'join': {
              const id = `w${watches.length}`;
              watches.push({ id, snapshot: null, ready: false, paused: false, left: false, failed: false, given: [] });
              reads = watchJoined(reads, id);
              return;
            }
            case 'watch-snapshot': {
              const w = pickFrom(live().filter((x) => x.snapshot === null));
              if (w) w.snapshot = committed;
              return;
            }
            case 'watch-ready': {
              const w = pickFrom(live().filter((x) => x.snapshot !== null && !x.ready));
              if (!w) return;
              w.ready = true;
              reads = watchTaking(reads, w.id, w.snapshot!);
              return tryRead();
            }
            case 'pause': {
              const w = pickFrom(live().filter((x) => x.ready && !x.paused));
              if (!w) return;
              w.paused = true;
              reads = watchPaused(reads, w.id);
              return;
            }
            case 'resume': {
              const w = pickFrom(live().filter((x) => x.paused));
              if (!w) return;
              w.paused = false;
              reads = watchTaking(reads, w.id);
              return tryRead();
            }
            case 'leave': {
              const w = pickFrom(live());
              if (!w) return;
              w.left = true;
              reads = watchLeft(reads, w.id);
              return tryRead();
            }
            case 'read-snapshot':
              if (read && read.count === null) read.count = committed;
              return;
            case 'read-end': {
              if (!read || read.count === null) return;
              const ended = readEnded(reads, batchOf(read.after, read.count));
              read = null;
              reads = ended.reads;
              for (const { watch, changes } of ended.deliveries) watches.find((w) => w.id === watch)!.given.push(...positionsIn(changes));
              return tryRead();
            }
            case 'read-fail': {
              if (!read) return;
              const failed = readFailed(reads);
              read = null;
              reads = failed.reads;
              for (const id of failed.ended) watches.find((w) => w.id === id)!.failed = true;
              return tryRead();
            }
          }
        };

        for (const s of steps) act(s);
        // Settle: every notice arrives, every snapshot is read, every paused watch resumes, every read ends.
        for (let rounds = 0; rounds < 1_000; rounds += 1) {
          const before = JSON.stringify({ reads, read, notices, watches });
          while (notices > 0) act({ kind: 'notice' });
          for (const w of live()) {
            if (w.snapshot === null) w.snapshot = committed;
            if (!w.ready) {
              w.ready = true;
              reads = watchTaking(reads, w.id, w.snapshot);
            }
            if (w.paused) {
              w.paused = false;
              reads = watchTaking(reads, w.id);
            }
          }
          tryRead();
          act({ kind: 'read-snapshot' });
          act({ kind: 'read-end' });
          if (JSON.stringify({ reads, read, notices, watches }) === before) break;
        }
        expect(read).toBeNull();
        for (const w of watches) {
          if (w.snapshot === null) continue;
          const expected = Array.from({ length: committed - w.snapshot }, (_, i) => w.snapshot! + i + 1);
          if (w.left || w.failed) expect(w.given).toEqual(expected.slice(0, w.given.length));
          else expect(w.given).toEqual(expected);
        }
        if (live().length === 0) expect(unfollowed(reads)).toBe(true);
      }),
      { numRuns: 500 },
    );
  });
});
