import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { replayTraceRun, type TraceVector } from './recorded-run-vectors.fixture';

// The recording core's shared trace vectors: the Python package's core replays the same file, byte for byte.
const vectors = JSON.parse(readFileSync(join(__dirname, '../../../contract/test-vectors/recorded-runs.json'), 'utf8')) as TraceVector[];

describe('the recording core replays the shared trace vectors', () => {
  it.each(vectors.map((vector) => [vector.description, vector] as const))('%s', async (_description, vector) => {
    for (const run of vector.runs) expect(await replayTraceRun(vector, run)).toEqual(run.events);
  });

  it('covers what every recording must agree on', () => {
    const steps = new Set(vectors.flatMap((vector) => vector.runs.flatMap((run) => run.steps.map((step) => step.step))));
    expect([...steps].sort()).toEqual([
      'approvalDecided',
      'approvalRequested',
      'complete',
      'fail',
      'modelResponse',
      'resumedCall',
      'toolResult',
    ]);
  });
});
