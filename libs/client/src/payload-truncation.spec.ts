import fc from 'fast-check';
import { VALID_SAMPLES } from '../../contract/src/contract-samples.fixture';
import { parseToolEvent } from '../../contract/src/parse-tool-event';
import { TRUNCATION_TAIL, truncationMarker } from '../../contract/src/truncation-marker';
import { serializeValidEvent } from './event-validation';
import {
  checkMaxResultChars,
  cutText,
  type EventLimits,
  resultCharLimit,
  serializeFittedEvent,
  TRUNCATED_ARGUMENTS_KEY,
} from './payload-truncation';
import { InvalidToolEventError } from './tool-history-errors';

const MiB = 1024 * 1024;
const call = VALID_SAMPLES.ToolCallRequested;
const result = VALID_SAMPLES.ToolResultReceived;
const bytesOf = (text: string) => Buffer.byteLength(text);
const fitted = (event: Record<string, unknown>, limits: EventLimits) =>
  JSON.parse(serializeFittedEvent(event, limits)) as Record<string, unknown>;

function problemsOf(run: () => unknown): readonly string[] {
  try {
    run();
  } catch (error) {
    if (error instanceof InvalidToolEventError) return error.problems;
    throw error;
  }
  return [];
}

describe('cutText', () => {
  it.each([
    ['abcdef', 3, 'abc' + truncationMarker(3)],
    ['abcdef', 0, truncationMarker(6)],
    // Keeping 2 would split 😀 (two code units): it goes whole.
    ['a😀b', 2, 'a' + truncationMarker(3)],
    ['a😀b', 3, 'a😀' + truncationMarker(1)],
    ['x'.repeat(5_000), 1_000, 'x'.repeat(1_000) + '…[truncated 4,000 chars]'],
  ])('cuts %j to %i characters and the marker', (text, keep, cut) => {
    expect(cutText(text, keep)).toBe(cut);
  });
});

describe('maxResultChars', () => {
  it.each([
    [undefined, 'fetch_page', undefined],
    [500, 'fetch_page', 500],
    [500, undefined, 500],
    [{ defaults: 500, tools: { fetch_page: 20 } }, 'fetch_page', 20],
    [{ defaults: 500, tools: { fetch_page: 20 } }, 'get_order', 500],
    [{ defaults: 500, tools: { fetch_page: 20 } }, undefined, 500],
    [{ tools: { fetch_page: 20 } }, 'get_order', undefined],
    // A tool named like an Object.prototype member is still only the tools it names.
    [{ defaults: 7, tools: {} }, 'constructor', 7],
  ])('of %j for the tool %j is %j', (option, toolName, limit) => {
    expect(resultCharLimit(option, toolName)).toBe(limit);
  });

  it.each([
    [0, 'maxResultChars: must be a whole number of characters, 1 or more (got 0)'],
    [2.5, 'maxResultChars: must be a whole number of characters, 1 or more (got 2.5)'],
    ['100', 'maxResultChars: must be a whole number of characters, 1 or more (got "100")'],
    [{ default: 100 }, 'maxResultChars.default: unknown key (allowed: defaults, tools)'],
    [{ defaults: -1 }, 'maxResultChars.defaults: must be a whole number of characters, 1 or more (got -1)'],
    [{ tools: [] }, 'maxResultChars.tools: must be an object of tool names and their limits'],
    [{ tools: { fetch_page: null } }, 'maxResultChars.tools.fetch_page: must be a whole number of characters, 1 or more (got null)'],
  ])('refuses %j: %s', (option, message) => {
    expect(() => checkMaxResultChars(option)).toThrow(new TypeError(message));
  });

  it('accepts a number, and defaults and tools', () => {
    expect(() => checkMaxResultChars(5_000)).not.toThrow();
    expect(() => checkMaxResultChars({ defaults: 5_000, tools: { fetch_page: 200 } })).not.toThrow();
  });
});

describe('serializeFittedEvent', () => {
  const limits = { maxEventBytes: MiB };

  it('sends an event within the limits exactly as it is', () => {
    for (const sample of Object.values(VALID_SAMPLES)) {
      expect(serializeFittedEvent(sample, limits)).toBe(serializeValidEvent(sample));
    }
  });

  it('cuts a 3 MB string result to fit 1 MiB, with the marker, and says how large it was', () => {
    const text = 'lorem ipsum '.repeat(250_000);
    const json = serializeFittedEvent({ ...result, result: text }, limits);
    const event = JSON.parse(json) as { result: string; originalBytes: number };
    expect(bytesOf(json)).toBeLessThanOrEqual(MiB);
    expect(bytesOf(json)).toBeGreaterThan(MiB - 6);
    expect(event.originalBytes).toBe(3_000_002);
    const kept = event.result.replace(TRUNCATION_TAIL, '');
    expect(text.startsWith(kept)).toBe(true);
    expect(event.result).toBe(kept + truncationMarker(text.length - kept.length));
    expect(parseToolEvent(json).ok).toBe(true);
  });

  it('cuts a JSON result as its JSON text: it becomes a string', () => {
    const rows = Array.from({ length: 40_000 }, (_, i) => ({ id: i, name: `customer ${i}`, email: `c${i}@example.com` }));
    const event = fitted({ ...result, result: { rows } }, { maxEventBytes: 64 * 1024 });
    expect(typeof event.result).toBe('string');
    expect((event.result as string).startsWith('{"rows":[{"id":0,"name":"customer 0"')).toBe(true);
    expect(event.result).toMatch(TRUNCATION_TAIL);
    expect(event.originalBytes).toBe(bytesOf(JSON.stringify({ rows })));
  });

  it(`cuts arguments into { ${TRUNCATED_ARGUMENTS_KEY}: "<the start of their JSON text>…" }, so they stay an object`, () => {
    const args = { document: 'é'.repeat(600_000), title: 'notes' };
    const event = fitted({ ...call, arguments: args }, limits);
    expect(Object.keys(event.arguments as object)).toEqual([TRUNCATED_ARGUMENTS_KEY]);
    const cut = (event.arguments as Record<string, string>)[TRUNCATED_ARGUMENTS_KEY];
    expect(cut.startsWith('{"document":"ééé')).toBe(true);
    expect(cut).toMatch(/é…\[truncated [\d,]+ chars\]$/);
    expect(event.originalBytes).toBe(bytesOf(JSON.stringify(args)));
    expect(event.toolName).toBe(call.toolName);
  });

  it.each([
    ['a string result', 'x'.repeat(50), 'x'.repeat(20) + truncationMarker(30)],
    ['a JSON result', { note: 'y'.repeat(40) }, '{"note":"yyyyyyyyyyy' + truncationMarker(51 - 20)],
    ['a result that would split a surrogate pair', 'x'.repeat(19) + '😀'.repeat(10), 'x'.repeat(19) + truncationMarker(20)],
  ])('cuts %s longer than maxResultChars to that many characters and the marker', (_case, value, cut) => {
    const event = fitted({ ...result, result: value }, { maxEventBytes: MiB, maxResultChars: 20 });
    expect(event.result).toBe(cut);
    expect(event.originalBytes).toBe(bytesOf(JSON.stringify(value)));
  });

  it('leaves a result at maxResultChars, and a call whatever its length, as they are', () => {
    expect(serializeFittedEvent({ ...result, result: 'x'.repeat(20) }, { maxEventBytes: MiB, maxResultChars: 20 })).toBe(
      serializeValidEvent({ ...result, result: 'x'.repeat(20) }),
    );
    const longCall = { ...call, arguments: { text: 'x'.repeat(100) } };
    expect(serializeFittedEvent(longCall, { maxEventBytes: MiB, maxResultChars: 20 })).toBe(serializeValidEvent(longCall));
  });

  it('refuses an event that cannot be made to fit, saying what takes the room', () => {
    expect(problemsOf(() => serializeFittedEvent({ ...result, result: 'x'.repeat(1_000) }, { maxEventBytes: 300 }))).toEqual([
      expect.stringMatching(
        /^event is \d+ bytes, larger than the limit of 300 bytes, and still is with its result cut to the truncation marker alone: the rest of the event takes \d+ bytes$/,
      ),
    ]);
    expect(problemsOf(() => serializeFittedEvent({ ...VALID_SAMPLES.ToolApprovalRequested, reason: 'x'.repeat(MiB) }, limits))).toEqual([
      expect.stringMatching(/^event is \d+ bytes, larger than the limit of 1048576 bytes$/),
    ]);
  });

  it('refuses an invalid event whatever its size, naming the field', () => {
    expect(problemsOf(() => serializeFittedEvent({ ...result, toolCallId: 7, result: 'x'.repeat(2 * MiB) }, limits))).toEqual([
      'toolCallId must be string',
    ]);
  });

  describe('for any payload and limits', () => {
    // Characters whose JSON or UTF-8 takes more than one byte, surrogate pairs and lone surrogates among them.
    const unit = fc.oneof(
      fc.constantFrom('a', ' ', '"', '\\', '\n', '\u0007', 'é', '€', '…', '😀', '\u2028', '\ud800', '\udfff'),
      fc.string({ unit: 'binary', minLength: 1, maxLength: 1 }),
    );
    const text = fc.string({ unit, maxLength: 2_000, size: 'medium' });
    const payload = fc.oneof(
      fc.record({
        field: fc.constant('result' as const),
        value: fc.oneof(text, fc.array(text, { maxLength: 4 }), fc.dictionary(text, text, { maxKeys: 4 })),
      }),
      fc.record({ field: fc.constant('arguments' as const), value: fc.dictionary(text, fc.oneof(text, fc.integer()), { maxKeys: 4 }) }),
    );
    const eventLimits = fc.record({
      // From less than the envelope and a marker (refused) to more than most payloads (sent as they are).
      maxEventBytes: fc.integer({ min: 250, max: 3_000 }),
      maxResultChars: fc.option(fc.integer({ min: 1, max: 2_000 }), { nil: undefined }),
    });

    it('the event is sent as it is within the limits, else cut to fit when the marker alone fits, else refused', () => {
      fc.assert(
        fc.property(payload, eventLimits, ({ field, value }, limits) => {
          const event: Record<string, unknown> = field === 'result' ? { ...result, result: value } : { ...call, arguments: value };
          const original = typeof value === 'string' ? value : JSON.stringify(value);
          const charLimit = field === 'result' ? limits.maxResultChars : undefined;
          const uncut = JSON.stringify(event);
          const wrap = (cut: string) => (field === 'arguments' ? { [TRUNCATED_ARGUMENTS_KEY]: cut } : cut);
          const originalBytes = bytesOf(JSON.stringify(value));
          const markerAloneFits =
            bytesOf(JSON.stringify({ ...event, [field]: wrap(truncationMarker(original.length)), originalBytes })) <= limits.maxEventBytes;

          if ((charLimit === undefined || original.length <= charLimit) && bytesOf(uncut) <= limits.maxEventBytes) {
            // Byte for byte what was sent before payloads were cut.
            expect(serializeFittedEvent(event, limits)).toBe(uncut);
            return;
          }
          if (!markerAloneFits) {
            expect(problemsOf(() => serializeFittedEvent(event, limits))[0]).toMatch(/^event is \d+ bytes, larger than the limit/);
            return;
          }
          const json = serializeFittedEvent(event, limits);
          expect(bytesOf(json)).toBeLessThanOrEqual(limits.maxEventBytes);
          expect(parseToolEvent(json, limits.maxEventBytes).ok).toBe(true);
          const sent = JSON.parse(json) as Record<string, unknown>;
          expect(sent.originalBytes).toBe(originalBytes);
          const cut = field === 'result' ? sent.result : (sent.arguments as Record<string, unknown>)[TRUNCATED_ARGUMENTS_KEY];
          if (field === 'arguments') expect(Object.keys(sent.arguments as object)).toEqual([TRUNCATED_ARGUMENTS_KEY]);
          expect(typeof cut).toBe('string');
          const tail = TRUNCATION_TAIL.exec(cut as string);
          expect(tail).not.toBeNull();
          const kept = (cut as string).slice(0, tail!.index);
          expect(tail![0]).toBe(truncationMarker(original.length - kept.length));
          expect(original.startsWith(kept)).toBe(true);
          expect(kept.length).toBeLessThan(original.length);
          // No surrogate pair is split.
          expect(/[\ud800-\udbff]$/.test(kept) && /^[\udc00-\udfff]/.test(original.slice(kept.length))).toBe(false);
          if (charLimit !== undefined) expect(kept.length).toBeLessThanOrEqual(charLimit);
          // A cut for size keeps all that fits: one more character (at most 6 bytes of JSON) would not.
          if (charLimit === undefined || kept.length < charLimit - 1) expect(bytesOf(json)).toBeGreaterThan(limits.maxEventBytes - 6);
          // The rest of the event is as it was.
          const { originalBytes: _ignored, ...rest } = sent;
          expect({ ...rest, [field]: event[field] }).toEqual(event);
        }),
        { numRuns: 500 },
      );
    });

    it('the marker is there if and only if the payload was cut', () => {
      fc.assert(
        fc.property(text, eventLimits, (value, limits) => {
          let sent: Record<string, unknown>;
          try {
            sent = fitted({ ...result, result: value }, limits);
          } catch {
            return;
          }
          expect(TRUNCATION_TAIL.test(sent.result as string)).toBe(sent.result !== value);
          expect('originalBytes' in sent).toBe(sent.result !== value);
        }),
      );
    });
  });
});
