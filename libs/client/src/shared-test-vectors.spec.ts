import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { INVALID_SAMPLES, MORE_VALID_SAMPLES, RUN_COMPLETED_V1, VALID_SAMPLES } from '../../contract/src/contract-samples.fixture';
import { deriveEventId, type EventIdentity, type RunIdentity } from './event-ids';
import { type EventLimits, serializeFittedEvent } from './payload-truncation';
import { InvalidToolEventError } from './tool-history-errors';

// The vectors every client of the contract must pass, in any language: the Python package's tests read the same files.
const vectors = (name: string): unknown => JSON.parse(readFileSync(join(__dirname, '../../contract/test-vectors', name), 'utf8'));

interface EventIdVector {
  run: RunIdentity;
  identity: EventIdentity;
  eventId: string;
}

interface FittedEventVector {
  description: string;
  event: Record<string, unknown>;
  limits: EventLimits;
  json?: string;
  error?: string;
}

describe('the shared test vectors', () => {
  it.each((vectors('event-ids.json') as EventIdVector[]).map((vector) => [JSON.stringify([vector.run, vector.identity]), vector] as const))(
    'event id of %s',
    (_name, { run, identity, eventId }) => {
      expect(deriveEventId(run, identity)).toBe(eventId);
    },
  );

  it.each((vectors('fitted-events.json') as FittedEventVector[]).map((vector) => [vector.description, vector] as const))(
    'fitted event: %s',
    (_description, { event, limits, json, error }) => {
      if (json !== undefined) {
        expect(serializeFittedEvent(event, limits)).toBe(json);
        return;
      }
      let problems: readonly string[] = [];
      try {
        serializeFittedEvent(event, limits);
      } catch (thrown) {
        if (!(thrown instanceof InvalidToolEventError)) throw thrown;
        problems = thrown.problems;
      }
      expect(problems.join('; ')).toContain(error);
    },
  );

  it('contract samples are the contract fixture as JSON (what a client in another language checks its validation with)', () => {
    const asPlain = (event: Record<string, unknown>) => JSON.parse(JSON.stringify(event)) as unknown;
    const valid = [...Object.entries(VALID_SAMPLES), ['RunCompleted v1', RUN_COMPLETED_V1] as const, ...MORE_VALID_SAMPLES];
    expect(vectors('contract-samples.json')).toEqual({
      valid: valid.map(([description, event]) => ({ description, event: asPlain(event) })),
      invalid: INVALID_SAMPLES.map(([description, event, field]) => ({ description, event: asPlain(event), field })),
    });
  });
});
