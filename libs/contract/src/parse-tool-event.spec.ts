import { ErrorCode } from '@toolhistory/errors';
import fc from 'fast-check';
import { agentTraffic } from '../../../test/support/traffic';
import { asJson, INVALID_SAMPLES, MORE_VALID_SAMPLES, RUN_COMPLETED_V1, VALID_SAMPLES } from './contract-samples.fixture';
import { parseToolEvent, validateToolEvent, validateToolEventWithClasses } from './parse-tool-event';

describe('parseToolEvent', () => {
  it.each(Object.entries(VALID_SAMPLES))('accepts a %s event and returns it unchanged', (_type, sample) => {
    const parsed = parseToolEvent(Buffer.from(asJson(sample)));
    expect(parsed).toEqual({ ok: true, event: JSON.parse(asJson(sample)) });
  });

  it.each(MORE_VALID_SAMPLES)('accepts %s', (_description, sample) => {
    expect(parseToolEvent(asJson(sample)).ok).toBe(true);
  });

  it.each(INVALID_SAMPLES)('rejects %s, naming %s', (_description, sample, field) => {
    const parsed = parseToolEvent(asJson(sample));
    if (parsed.ok) throw new Error('expected a rejection');
    expect(parsed.error.retriable).toBe(false);
    expect(parsed.error.message.startsWith(field) || parsed.error.message.includes(`; ${field}`)).toBe(true);
  });

  it('drops unknown properties so the stored event is exactly the contract', () => {
    const parsed = parseToolEvent(
      asJson({
        ...VALID_SAMPLES.RunCompleted,
        traceId: 't-1',
        usage: [
          { inputTokens: 1, outputTokens: 2, model: 'm', cached: 9 },
          { inputTokens: 3, outputTokens: 4 },
        ],
      }),
    );
    if (!parsed.ok) throw parsed.error;
    expect(parsed.event).not.toHaveProperty('traceId');
    expect((parsed.event as { usage: object }).usage).toEqual([
      { inputTokens: 1, outputTokens: 2, model: 'm' },
      { inputTokens: 3, outputTokens: 4 },
    ]);
    // Plain data: nothing downstream sees the validation classes.
    for (const entry of (parsed.event as { usage: object[] }).usage) expect(Object.getPrototypeOf(entry)).toBe(Object.prototype);
  });

  it("keeps a producer's redaction only beside producerRedacted, and only its persist", () => {
    const withheld = { ...VALID_SAMPLES.ToolResultReceived, result: null, originalBytes: 40, producerRedacted: true };
    const parsed = parseToolEvent(asJson({ ...withheld, redaction: { persist: 'metadata', counts: { email: 1 }, originalBytes: 7 } }));
    expect(parsed).toEqual({ ok: true, event: JSON.parse(asJson({ ...withheld, redaction: { persist: 'metadata' } })) });

    const unclaimed = parseToolEvent(asJson({ ...VALID_SAMPLES.ToolCallRequested, redaction: { persist: 'none', counts: {} } }));
    expect(unclaimed).toEqual({ ok: true, event: JSON.parse(asJson(VALID_SAMPLES.ToolCallRequested)) });

    // Other events never carry a producer's redaction.
    const failure = parseToolEvent(asJson({ ...VALID_SAMPLES.RunFailed, producerRedacted: true, redaction: { persist: 'none' } }));
    expect(failure).toEqual({ ok: true, event: JSON.parse(asJson(VALID_SAMPLES.RunFailed)) });
  });

  it('keeps a version 1 event as version 1, dropping unknown properties by the version 1 rules', () => {
    const parsed = parseToolEvent(asJson({ ...RUN_COMPLETED_V1, usage: { inputTokens: 1, outputTokens: 2, cached: 9 } }));
    if (!parsed.ok) throw parsed.error;
    expect(parsed.event).toEqual({ ...RUN_COMPLETED_V1, usage: { inputTokens: 1, outputTokens: 2 } });
  });

  it('keeps citedSources as sent (repeats too), at most 10000 of them; a version 1 completion drops them as unknown', () => {
    const cited = Array.from({ length: 10_000 }, (_, i) => i);
    const parsed = parseToolEvent(asJson({ ...VALID_SAMPLES.RunCompleted, citedSources: [...cited.slice(2), 0, 0] }));
    if (!parsed.ok) throw parsed.error;
    expect((parsed.event as { citedSources: number[] }).citedSources).toEqual([...cited.slice(2), 0, 0]);
    const tooMany = parseToolEvent(asJson({ ...VALID_SAMPLES.RunCompleted, citedSources: [...cited, 1] }));
    expect(tooMany.ok ? '' : tooMany.error.message).toBe('citedSources must have at most 10000 entries');
    const v1 = parseToolEvent(asJson({ ...RUN_COMPLETED_V1, citedSources: [1] }));
    if (!v1.ok) throw v1.error;
    expect(v1.event).not.toHaveProperty('citedSources');
  });

  it('says a missing field is required, once, instead of every rule it fails', () => {
    const parsed = parseToolEvent(asJson({ ...VALID_SAMPLES.ToolCallRequested, tenantId: undefined, usage: undefined }));
    expect(parsed.ok ? '' : parsed.error.message).toBe('tenantId is required');
    const nested = parseToolEvent(asJson({ ...VALID_SAMPLES.RunCompleted, usage: [{ inputTokens: 1 }] }));
    expect(nested.ok ? '' : nested.error.message).toBe('usage.0.outputTokens is required');
  });

  it("bounds indices to the read model's 32-bit columns", () => {
    const parsed = parseToolEvent(asJson({ ...VALID_SAMPLES.ToolCallRequested, roundIndex: 2_147_483_648 }));
    expect(parsed.ok ? '' : parsed.error.message).toBe('roundIndex must be at most 2147483647');
    expect(parseToolEvent(asJson({ ...VALID_SAMPLES.ToolCallRequested, roundIndex: 2_147_483_647 })).ok).toBe(true);
    // Version 1 keeps its released rule for token totals.
    expect(parseToolEvent(asJson({ ...RUN_COMPLETED_V1, usage: { inputTokens: 2 ** 40, outputTokens: 0 } })).ok).toBe(true);
  });

  it('refuses arguments and results nested deeper than 64 levels, however deep, without exhausting the stack', () => {
    const nest = (depth: number): unknown => {
      // Objects and arrays in turn, an object outermost (arguments must be one).
      let value: unknown = 'leaf';
      for (let i = depth; i > 0; i -= 1) value = i % 2 ? { k: value } : [value];
      return value;
    };
    expect(parseToolEvent(asJson({ ...VALID_SAMPLES.ToolCallRequested, arguments: nest(64) })).ok).toBe(true);
    const deep = parseToolEvent(asJson({ ...VALID_SAMPLES.ToolCallRequested, arguments: nest(65) }));
    expect(deep.ok ? '' : deep.error.message).toBe('arguments must not nest deeper than 64 levels');
    // About 60 KB of nesting, as a hostile producer would send it (JSON.stringify itself would overflow here).
    const text = asJson(VALID_SAMPLES.ToolResultReceived).replace(
      /"result":("[^"]*"|\{[^}]*\})/,
      `"result":${'['.repeat(30_000)}${']'.repeat(30_000)}`,
    );
    const hostile = parseToolEvent(text);
    expect(hostile.ok ? '' : hostile.error.message).toBe('result must not nest deeper than 64 levels');
    expect(hostile.ok ? undefined : hostile.error.code).toBe(ErrorCode.InvalidEvent);
  });

  it('lists every problem of an event at once', () => {
    const parsed = parseToolEvent(asJson({ ...VALID_SAMPLES.ToolCallRequested, tenantId: '', roundIndex: -1, arguments: [] }));
    if (parsed.ok) throw new Error('expected a rejection');
    expect(parsed.error.message).toMatch(/tenantId/);
    expect(parsed.error.message).toMatch(/roundIndex/);
    expect(parsed.error.message).toMatch(/arguments/);
  });

  it.each([
    ['text that is not JSON', 'not json {', ErrorCode.NotJson],
    ['an empty value', '', ErrorCode.NotJson],
    ['a JSON array', '[1,2]', ErrorCode.InvalidEvent],
    ['a JSON string', '"hello"', ErrorCode.InvalidEvent],
    ['an unknown type', asJson({ ...VALID_SAMPLES.RunFailed, type: 'Nope' }), ErrorCode.UnknownEventType],
    ['an unknown schemaVersion', asJson({ ...VALID_SAMPLES.RunFailed, schemaVersion: 9 }), ErrorCode.UnsupportedSchemaVersion],
  ])('classifies %s', (_description, value, code) => {
    const parsed = parseToolEvent(value);
    expect(parsed.ok ? undefined : parsed.error.code).toBe(code);
  });

  it('rejects an event larger than the configured limit before parsing it', () => {
    const big = asJson({ ...VALID_SAMPLES.ToolResultReceived, result: 'x'.repeat(2_000) });
    const parsed = parseToolEvent(big, 1_024);
    if (parsed.ok) throw new Error('expected a rejection');
    expect(parsed.error.code).toBe(ErrorCode.Oversize);
    expect(parsed.error.message).toMatch(/limit of 1024 bytes/);
    expect(parseToolEvent(big).ok).toBe(true);
  });

  describe('the compiled schema on the hot path and the validation classes', () => {
    const bothGive = (value: unknown) => {
      const fast = validateToolEvent(value);
      const classes = validateToolEventWithClasses(value);
      // Same verdict, same event, fields in the same order (what is stored is this JSON).
      expect(JSON.stringify(fast)).toEqual(JSON.stringify(classes));
    };

    it.each([...Object.entries(VALID_SAMPLES), ['RunCompleted v1', RUN_COMPLETED_V1] as const, ...MORE_VALID_SAMPLES])(
      'give the same event for %s',
      (_description, sample) => bothGive(JSON.parse(asJson(sample))),
    );

    it('give the same event for agent traffic', () => {
      for (const event of agentTraffic(2_000, { seed: 7, tenants: 2, conversations: 40, duplicateRate: 0 })) {
        bothGive(JSON.parse(JSON.stringify(event)));
      }
    });

    it('drop the same unknown fields, at the top and in nested objects, and keep payloads whole', () => {
      const extra = fc.dictionary(
        fc.string({ minLength: 1, maxLength: 6 }).filter((key) => key !== '__proto__'),
        fc.jsonValue({ maxDepth: 2 }),
        { maxKeys: 3 },
      );
      const sample = fc.constantFrom(...Object.values(VALID_SAMPLES), RUN_COMPLETED_V1);
      fc.assert(
        fc.property(sample, extra, extra, (base, top, inner) => {
          const event = JSON.parse(asJson(base)) as Record<string, unknown>;
          const withExtra: Record<string, unknown> = { ...top, ...event };
          if (Array.isArray(event.usage)) withExtra.usage = (event.usage as object[]).map((entry) => ({ ...inner, ...entry }));
          else if (event.usage) withExtra.usage = { ...inner, ...(event.usage as object) };
          if (event.error) withExtra.error = { ...inner, ...(event.error as object) };
          if (event.arguments) withExtra.arguments = { ...inner, ...(event.arguments as object) };
          bothGive(withExtra);
        }),
      );
    });

    it('refuse the same events with the same reasons', () => {
      for (const [, sample] of INVALID_SAMPLES) bothGive(JSON.parse(asJson(sample)));
      let deep: Record<string, unknown> = {};
      const root = deep;
      for (let level = 1; level < 65; level++) deep = (deep.child = {}) as Record<string, unknown>;
      bothGive({ ...JSON.parse(asJson(VALID_SAMPLES.ToolResultReceived)), result: root });
      bothGive([VALID_SAMPLES.RunFailed]);
      bothGive(null);
    });
  });
});
