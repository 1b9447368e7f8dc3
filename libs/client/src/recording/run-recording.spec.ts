import fc from 'fast-check';
import { type PendingEvent, type PublishedEvent, RunPublisher } from '../run-publisher';
import { RunRecording } from './run-recording';

const scope = { tenantId: 't', conversationId: 'c', channel: 'web', runId: 'r' };

/** A RunPublisher whose sends take the given times to be acknowledged: what it was sent lands in `sent`, in the order sends finished. */
function slowRun(delays: () => number) {
  const sent: PendingEvent[] = [];
  const run = new RunPublisher(scope, async (batch): Promise<PublishedEvent[]> => {
    await new Promise((resolve) => setTimeout(resolve, delays()));
    sent.push(...batch);
    return batch.map(({ identity }, i) => ({
      eventId: `e${sent.length + i}`,
      type: identity.type,
      partition: 0,
      offset: '0',
      consistencyToken: '',
    }));
  });
  return { run, sent };
}

describe('RunRecording', () => {
  it('publishes the steps in the order they were asked for, however long each takes to be acknowledged', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.nat({ max: 3 }), { minLength: 1, maxLength: 8 }), async (delays) => {
        let at = 0;
        const { run, sent } = slowRun(() => delays[at++ % delays.length]);
        const recording = new RunRecording(run);
        const round = recording.response({ calls: delays.map((_, i) => ({ toolCallId: `c${i}`, toolName: 'tool', arguments: {} })) })!;
        const published = round.calls.map((call) => recording.publishCall(call));
        published.push(...[...round.calls].reverse().map((call) => recording.publishResult({ ...call, result: 'ok', isError: false })));
        await Promise.all(published);
        await recording.complete();
        const order = sent.map((event) => `${event.identity.type}:${'toolCallId' in event.fields ? String(event.fields.toolCallId) : ''}`);
        expect(order).toEqual([
          ...round.calls.map((call) => `ToolCallRequested:${call.toolCallId}`),
          ...[...round.calls].reverse().map((call) => `ToolResultReceived:${call.toolCallId}`),
          'RunCompleted:',
        ]);
      }),
      { numRuns: 20 },
    );
  });

  it('ends a run exactly once, whichever ends are asked for and however often', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.constantFrom('complete', 'fail'), { minLength: 1, maxLength: 5 }), async (ends) => {
        const { run, sent } = slowRun(() => 0);
        const recording = new RunRecording(run);
        const outcomes = ends.map((end) =>
          end === 'complete' ? recording.complete() : recording.fail({ error: { code: 'x', message: 'y' } }),
        );
        await Promise.all(outcomes);
        expect(sent.map((event) => event.identity.type)).toEqual([ends[0] === 'complete' ? 'RunCompleted' : 'RunFailed']);
        expect(new Set(outcomes).size).toBe(1);
        await expect(recording.recorded).resolves.toBeUndefined();
      }),
      { numRuns: 30 },
    );
  });

  it('rejects `recorded` with the first step that failed, and settled() names it', async () => {
    const run = new RunPublisher(scope, async () => {
      throw new Error('broker down');
    });
    const recording = new RunRecording(run, { afterFailedStep: 'end-as-failed' });
    const round = recording.response({ calls: [{ toolCallId: 'c1', toolName: 'get_order', arguments: {} }] })!;
    await expect(recording.publishCalls(round.calls)).rejects.toThrow('broker down');
    expect(recording.failed).toBe(true);
    await recording.complete();
    await expect(recording.recorded).rejects.toThrow('broker down');
    await expect(recording.settled()).rejects.toThrow('ToolCallRequested round 0 call 0 (get_order c1): broker down');
  });
});
