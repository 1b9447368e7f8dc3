import { asJson, INVALID_SAMPLES, MORE_VALID_SAMPLES, RUN_COMPLETED_V1, VALID_SAMPLES } from '../../contract/src/contract-samples.fixture';
import { parseToolEvent } from '../../contract/src/parse-tool-event';
import { serializeValidEvent } from './event-validation';
import { InvalidToolEventError } from './tool-history-errors';

const plain = (sample: Record<string, unknown>) => JSON.parse(asJson(sample)) as Record<string, unknown>;

function problemsOf(sample: Record<string, unknown>): readonly string[] {
  try {
    serializeValidEvent(plain(sample));
  } catch (error) {
    if (error instanceof InvalidToolEventError) return error.problems;
    throw error;
  }
  return [];
}

describe('events checked in the worker by the contract the service applies', () => {
  it.each([...Object.entries(VALID_SAMPLES), ['RunCompleted v1', RUN_COMPLETED_V1] as const, ...MORE_VALID_SAMPLES])(
    'accepts %s, as the service does',
    (_description, sample) => {
      expect(problemsOf(sample)).toEqual([]);
      expect(parseToolEvent(asJson(sample)).ok).toBe(true);
    },
  );

  it.each(INVALID_SAMPLES)('refuses %s naming %s, as the service does', (_description, sample, field) => {
    const problems = problemsOf(sample);
    expect(problems.join('; ')).toContain(field.split('.')[0]);
    expect(parseToolEvent(asJson(sample)).ok).toBe(false);
  });

  it('names a missing field as required', () => {
    expect(problemsOf({ ...VALID_SAMPLES.ToolCallRequested, toolName: undefined })).toContain('toolName is required');
  });

  it('refuses arguments nested deeper than 64 levels, which JSON Schema cannot say', () => {
    let deep: Record<string, unknown> = {};
    const root = deep;
    for (let level = 1; level < 65; level++) deep = (deep.child = {}) as Record<string, unknown>;
    expect(problemsOf({ ...VALID_SAMPLES.ToolCallRequested, arguments: root })).toEqual(['arguments must not nest deeper than 64 levels']);
    expect(parseToolEvent(asJson({ ...VALID_SAMPLES.ToolCallRequested, arguments: root })).ok).toBe(false);
  });

  it('refuses an event larger than the service accepts', () => {
    const sample = { ...VALID_SAMPLES.ToolResultReceived, result: 'x'.repeat(1024 * 1024) };
    expect(problemsOf(sample)[0]).toMatch(/^event is \d+ bytes, larger than the limit of 1048576 bytes$/);
    expect(parseToolEvent(asJson(sample)).ok).toBe(false);
  });

  it('returns the JSON it checked', () => {
    expect(JSON.parse(serializeValidEvent(plain(VALID_SAMPLES.RunFailed)))).toEqual(plain(VALID_SAMPLES.RunFailed));
  });
});
