import Ajv2020 from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import fc from 'fast-check';
import schema from '../schema/tool-event.schema.json';
import { asJson, INVALID_SAMPLES, MORE_VALID_SAMPLES, RUN_COMPLETED_V1, VALID_SAMPLES } from './contract-samples.fixture';
import { parseToolEvent } from './parse-tool-event';

const ajv = new Ajv2020({ allErrors: true, strict: true, strictRequired: false });
addFormats(ajv);
const validateWithSchema = ajv.compile(schema);

const schemaAccepts = (sample: Record<string, unknown>) => validateWithSchema(JSON.parse(asJson(sample)));
const classesAccept = (sample: Record<string, unknown>) => parseToolEvent(asJson(sample)).ok;

describe('the published JSON Schema and the validation classes', () => {
  it.each([...Object.entries(VALID_SAMPLES), ...MORE_VALID_SAMPLES])('both accept %s', (_d, sample) => {
    expect(schemaAccepts(sample)).toBe(true);
    expect(classesAccept(sample)).toBe(true);
  });

  it.each(INVALID_SAMPLES)('both reject %s', (_d, sample) => {
    expect(schemaAccepts(sample)).toBe(false);
    expect(classesAccept(sample)).toBe(false);
  });

  it('agree on any single-field change to a valid event', () => {
    const jsonValue = fc.oneof(
      fc.constant(undefined),
      fc.constant(null),
      fc.string({ maxLength: 8 }),
      fc.constantFrom('', 'ToolCallRequested', 'RunFailed', '2026-11-02T10:15:30Z', '1b4e28ba-2fa1-4d3b-a3f5-ef19b5a7633b'),
      fc.integer({ min: -3, max: 3 }),
      fc.constantFrom(2_147_483_647, 2_147_483_648, 2 ** 53),
      fc.double({ noNaN: true, noDefaultInfinity: true, min: -3, max: 3 }),
      fc.boolean(),
      fc.constant([]),
      fc.constant({}),
      fc.constant({ inputTokens: 1, outputTokens: 2 }),
      fc.constant([{ inputTokens: 1, outputTokens: 2 }]),
      fc.constant([
        { inputTokens: 1, outputTokens: 2, model: 'm' },
        { inputTokens: 0, outputTokens: 0 },
      ]),
      fc.constant([{ inputTokens: 1 }]),
      fc.constant([{ inputTokens: 1, outputTokens: 2, model: '' }]),
      fc.constant([7]),
      fc.constant([[]]),
      fc.constant({ code: 'x', message: 'y' }),
      fc.constantFrom({ persist: 'full' }, { persist: 'metadata' }, { persist: 'none' }, { persist: 'x' }, { counts: {} }),
    );
    const withheld = { producerRedacted: true, redaction: { persist: 'metadata' } };
    // Every current sample, the version 1 shape of the type that changed, and payloads a producer withheld.
    const bases = [
      ...Object.values(VALID_SAMPLES),
      RUN_COMPLETED_V1,
      { ...VALID_SAMPLES.ToolCallRequested, ...withheld, arguments: {} },
      { ...VALID_SAMPLES.ToolResultReceived, ...withheld, result: null },
    ];
    fc.assert(
      fc.property(fc.constantFrom(...bases), fc.nat(), jsonValue, (base, fieldIndex, value) => {
        const fields = Object.keys(base);
        const sample = { ...base, [fields[fieldIndex % fields.length]]: value };
        expect(classesAccept(sample)).toBe(schemaAccepts(sample));
      }),
      { numRuns: 2_000 },
    );
  });
});
