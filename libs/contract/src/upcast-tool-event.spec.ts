import fc from 'fast-check';
import { ErrorCode } from '@toolhistory/errors';
import { asJson, RUN_COMPLETED_V1, VALID_SAMPLES } from './contract-samples.fixture';
import { parseToolEvent, validateToolEvent } from './parse-tool-event';
import { CURRENT_SCHEMA_VERSION, RunCompleted, RunCompletedV1, SUPPORTED_SCHEMA_VERSIONS } from './tool-event.types';
import { upcastToolEvent, UPCASTERS } from './upcast-tool-event';

const deepFrozen = <T>(value: T): T => {
  if (typeof value === 'object' && value !== null) {
    Object.values(value).forEach(deepFrozen);
    Object.freeze(value);
  }
  return value;
};
const asStored = (sample: Record<string, unknown>) => deepFrozen(JSON.parse(asJson(sample)) as Record<string, unknown>);

describe('upcastToolEvent', () => {
  it('reads every supported version, and has an upcaster from each older one', () => {
    expect(CURRENT_SCHEMA_VERSION).toBe(2);
    expect(SUPPORTED_SCHEMA_VERSIONS).toEqual([1, 2]);
    for (const version of SUPPORTED_SCHEMA_VERSIONS.filter((v) => v < CURRENT_SCHEMA_VERSION)) expect(UPCASTERS[version]).toBeDefined();
  });

  it('turns a version 1 run total into a usage list of one entry, and changes nothing else but the version', () => {
    const stored = asStored(RUN_COMPLETED_V1);
    const { usage, schemaVersion, ...rest } = upcastToolEvent(stored) as RunCompleted;
    expect(schemaVersion).toBe(2);
    expect(usage).toEqual([{ inputTokens: 1530, outputTokens: 212 }]);
    const { usage: _v1Usage, schemaVersion: _v1, ...storedRest } = stored;
    expect(rest).toEqual(storedRest);
  });

  it('leaves an absent version 1 usage absent', () => {
    const upcast = upcastToolEvent(asStored({ ...RUN_COMPLETED_V1, usage: undefined }));
    expect(upcast).not.toHaveProperty('usage');
    expect(upcast).toEqual({ ...JSON.parse(asJson(RUN_COMPLETED_V1)), usage: undefined, schemaVersion: 2 });
  });

  it.each(['ToolCallRequested', 'ToolResultReceived', 'RunFailed'])('only sets the version of a version 1 %s', (type) => {
    const v1 = asStored({ ...VALID_SAMPLES[type], schemaVersion: 1 });
    expect(upcastToolEvent(v1)).toEqual({ ...v1, schemaVersion: 2 });
  });

  it('keeps what the recorder added to a version 1 event (its redaction note)', () => {
    const redaction = { persist: 'full', counts: { email: 1 }, originalBytes: 40 };
    expect(upcastToolEvent(asStored({ ...VALID_SAMPLES.ToolCallRequested, schemaVersion: 1, redaction }))).toMatchObject({
      schemaVersion: 2,
      redaction,
    });
  });

  it.each(Object.keys(VALID_SAMPLES))('returns a current %s as it is, without copying', (type) => {
    const current = asStored(VALID_SAMPLES[type]);
    expect(upcastToolEvent(current)).toBe(current);
  });

  it('rejects an unknown future version at validation, so it is never stored', () => {
    for (const schemaVersion of [3, 99]) {
      const parsed = parseToolEvent(asJson({ ...VALID_SAMPLES.RunCompleted, schemaVersion }));
      expect(parsed.ok ? undefined : parsed.error.code).toBe(ErrorCode.UnsupportedSchemaVersion);
    }
  });

  it('turns any valid version 1 completion into a valid version 2 one with the same token totals', () => {
    const id = fc.string({ minLength: 1, maxLength: 20 });
    const tokens = fc.nat({ max: 2 ** 31 - 1 });
    const v1Completion = fc.record(
      {
        runId: id,
        assistantMessageId: id,
        finishReason: fc.constantFrom('stop', 'tool_limit', 'terminated'),
        usage: fc.record({ inputTokens: tokens, outputTokens: tokens }),
      },
      { requiredKeys: ['runId', 'assistantMessageId', 'finishReason'] },
    );
    fc.assert(
      fc.property(v1Completion, (fields) => {
        const parsed = validateToolEvent({ ...RUN_COMPLETED_V1, usage: undefined, ...fields });
        if (!parsed.ok) throw parsed.error;
        const v1 = deepFrozen(parsed.event as RunCompletedV1);
        expect(v1.schemaVersion).toBe(1);

        const upcast = upcastToolEvent(v1) as RunCompleted;
        const revalidated = validateToolEvent(upcast);
        if (!revalidated.ok) throw revalidated.error;
        expect(revalidated.event).toEqual(upcast);
        expect(upcast.schemaVersion).toBe(2);

        const total = (kind: 'inputTokens' | 'outputTokens') => upcast.usage?.reduce((sum, call) => sum + call[kind], 0);
        expect(total('inputTokens')).toBe(v1.usage?.inputTokens);
        expect(total('outputTokens')).toBe(v1.usage?.outputTokens);
        expect('usage' in upcast).toBe(v1.usage !== undefined);
      }),
      { numRuns: 500 },
    );
  });
});
