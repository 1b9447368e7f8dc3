import fc from 'fast-check';
import { AppError, ErrorCode } from '@toolhistory/errors';
import { asJson, VALID_SAMPLES } from './contract-samples.fixture';
import { parseToolEvent } from './parse-tool-event';

const CODES = new Set<string>([
  ErrorCode.NotJson,
  ErrorCode.InvalidEvent,
  ErrorCode.Oversize,
  ErrorCode.UnknownEventType,
  ErrorCode.UnsupportedSchemaVersion,
]);

/** Whatever it is given, the parser returns an event or an error with a dead-letter code; it never throws. */
function expectAnAnswer(value: Buffer | string): void {
  const parsed = parseToolEvent(value, 64 * 1024);
  if (parsed.ok) {
    expect(typeof parsed.event.eventId).toBe('string');
  } else {
    expect(parsed.error).toBeInstanceOf(AppError);
    expect(CODES.has(parsed.error.code)).toBe(true);
    expect(parsed.error.retriable).toBe(false);
    expect(parsed.error.message.length).toBeGreaterThan(0);
  }
}

describe('parseToolEvent under fuzzing', () => {
  it('answers arbitrary bytes', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 2_000 }), (bytes) => expectAnAnswer(Buffer.from(bytes))),
      { numRuns: 2_000 },
    );
  });

  it('answers arbitrary JSON', () => {
    fc.assert(
      fc.property(fc.json({ depthSize: 'medium' }), (text) => expectAnAnswer(text)),
      { numRuns: 2_000 },
    );
  });

  it('answers valid events with any field set to any JSON value, or removed', () => {
    const samples = Object.values(VALID_SAMPLES);
    const anyValue = fc.oneof(
      fc.jsonValue({ depthSize: 'small' }),
      fc.constant(undefined),
      fc.string(),
      fc.double(),
      fc.bigInt().map(String),
    );
    fc.assert(
      fc.property(fc.constantFrom(...samples), fc.nat(), anyValue, (sample, index, value) => {
        const fields = Object.keys(sample);
        expectAnAnswer(asJson({ ...sample, [fields[index % fields.length]]: value }));
      }),
      { numRuns: 3_000 },
    );
  });

  it('answers valid events cut short or with bytes flipped', () => {
    const samples = Object.values(VALID_SAMPLES).map((s) => Buffer.from(asJson(s)));
    fc.assert(
      fc.property(fc.constantFrom(...samples), fc.nat(), fc.integer({ min: 0, max: 255 }), fc.boolean(), (sample, at, byte, cut) => {
        const mutated = Buffer.from(sample);
        const index = at % mutated.length;
        if (cut) expectAnAnswer(mutated.subarray(0, index));
        else {
          mutated[index] = byte;
          expectAnAnswer(mutated);
        }
      }),
      { numRuns: 3_000 },
    );
  });
});
