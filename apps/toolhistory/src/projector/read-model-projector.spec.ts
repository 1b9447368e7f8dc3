import type { CheckpointedProjection, EventStore, RecordedToolEvent } from '@toolhistory/domain';
import { toolCall } from '../../../../test/support/tool-event-factory';
import { ReadModelProjector } from './read-model-projector';

const APPLY_MS = 60;
const scope = { tenantId: 't', conversationId: 'c', runId: 'r' };
const recorded = (n: number): RecordedToolEvent => ({
  globalPosition: String(n),
  streamPosition: n,
  recordedAt: new Date().toISOString(),
  event: toolCall(scope, { roundIndex: n, sequenceIndex: 0 }),
});

/** A store that hands out two batches far enough apart that the projector applies them separately. */
function twoBatches(): EventStore {
  return {
    async *subscribe(_after, options) {
      yield recorded(1);
      await new Promise((r) => setTimeout(r, 50));
      if (!options?.signal?.aborted) yield recorded(2);
      await new Promise<void>((r) => options?.signal?.addEventListener('abort', () => r(), { once: true }));
    },
  } as Pick<EventStore, 'subscribe'> as EventStore;
}

/** A projection whose apply takes APPLY_MS and notes when each started and ended. */
function slowProjection(applied: Array<{ started: number; ended: number }>): CheckpointedProjection {
  return {
    checkpoint: async () => '0',
    apply: async () => {
      const started = Date.now();
      await new Promise((r) => setTimeout(r, APPLY_MS));
      applied.push({ started, ended: Date.now() });
    },
    skip: async () => undefined,
  };
}

async function appliedTwice(giveWay: boolean) {
  const applied: Array<{ started: number; ended: number }> = [];
  const asked: boolean[] = [];
  const projector = new ReadModelProjector(twoBatches(), slowProjection(applied), {
    lingerMs: 0,
    giveWayWhile: () => (asked.push(giveWay), giveWay),
  });
  projector.start();
  while (applied.length < 2) await new Promise((r) => setTimeout(r, 5));
  await projector.stop();
  return { applied, asked };
}

describe('ReadModelProjector giving way to recording', () => {
  it('waits as long as its last batch took before the next one while recording is busy', async () => {
    const { applied, asked } = await appliedTwice(true);
    expect(asked).toEqual([true, true]);
    // A timer may fire a millisecond early; the wait is the last apply's whole duration.
    expect(applied[1].started - applied[0].ended).toBeGreaterThanOrEqual(APPLY_MS - 2);
  });

  it('asks before every batch and goes straight on while recording is quiet', async () => {
    const { asked } = await appliedTwice(false);
    expect(asked).toEqual([false, false]);
  });

  it('says it is applying while a batch is applied, and not before or after', async () => {
    const seen: boolean[] = [];
    const projection = slowProjection([]);
    const watched = {
      ...projection,
      apply: async (batch: readonly RecordedToolEvent[]): Promise<void> => (seen.push(projector.applying()), projection.apply(batch)),
    };
    const projector: ReadModelProjector = new ReadModelProjector(twoBatches(), watched, { lingerMs: 0 });
    expect(projector.applying()).toBe(false);
    projector.start();
    while (seen.length < 2) await new Promise((r) => setTimeout(r, 5));
    await projector.stop();
    expect(seen).toEqual([true, true]);
    expect(projector.applying()).toBe(false);
  });
});
