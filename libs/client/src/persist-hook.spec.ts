import fc from 'fast-check';
import { parseToolEvent } from '../../contract/src/parse-tool-event';
import { DEFAULT_MAX_EVENT_BYTES } from '../../contract/src/tool-event.types';
import { truncationMarker } from '../../contract/src/truncation-marker';
import type { PersistAnswer, PersistContext, PersistOption } from './persist-hook';
import {
  type PayloadLimits,
  prepareEvents,
  type PublishedEvent,
  RunPublisher,
  type RunScope,
  ToolEventPublisher,
} from './tool-event-publisher';
import { InvalidToolEventError, PersistHookError } from './tool-history-errors';
import type { JsonObject, JsonValue } from './tool-event-types';

const scope: RunScope = { tenantId: 'acme', conversationId: 'conv-1', channel: 'web', runId: 'run-7' };
const NOW = new Date('2026-11-02T10:15:30.123Z');
const step = { roundIndex: 0, sequenceIndex: 0, toolCallId: 'call_1' };

/** A real RunPublisher whose events are prepared as ToolEventPublisher prepares them, and kept instead of sent. */
function capturingRun(
  persist: PersistOption | undefined,
  limits: Omit<PayloadLimits, 'persist'> = { maxEventBytes: DEFAULT_MAX_EVENT_BYTES },
) {
  const sent: string[] = [];
  const run = new RunPublisher(scope, async (batch): Promise<PublishedEvent[]> => {
    const prepared = prepareEvents(scope, batch, { ...limits, persist }, NOW);
    return prepared.map(({ eventId, type, value }) => {
      sent.push(value);
      return {
        eventId,
        type,
        partition: 0,
        offset: String(sent.length - 1),
        consistencyToken: `ct1:k:agent.tool-events:0:${sent.length - 1}`,
      };
    });
  });
  const events = () => sent.map((value) => JSON.parse(value) as Record<string, unknown>);
  return { run, sent, events };
}

const card = { customer: 'Ann', card: { number: '4111111111111111', cvc: '123' } };
const withoutCard = (payload: JsonValue): JsonValue => ({ ...(payload as JsonObject), card: '[hidden]' });

describe('the persist hook', () => {
  it('for all tools: is given the arguments and the result with their tool, and publishes what it returns', async () => {
    const seen: Array<[JsonValue, PersistContext]> = [];
    const { run, events } = capturingRun((payload, context) => {
      seen.push([payload, context]);
      return withoutCard(payload);
    });
    await run.toolCall({ ...step, toolName: 'charge', arguments: card });
    await run.toolResult({ ...step, result: card });
    expect(seen).toEqual([
      [card, { kind: 'arguments', toolName: 'charge' }],
      [card, { kind: 'result', toolName: 'charge' }],
    ]);
    const [call, result] = events();
    expect(call).toMatchObject({
      arguments: { customer: 'Ann', card: '[hidden]' },
      producerRedacted: true,
      redaction: { persist: 'full' },
    });
    expect(result).toMatchObject({ result: { customer: 'Ann', card: '[hidden]' }, producerRedacted: true, redaction: { persist: 'full' } });
    expect(JSON.stringify(events())).not.toContain('4111');
  });

  it("per tool: runs only the named tool's hook, and publishes other tools as they are", async () => {
    const { run, sent } = capturingRun({ charge: () => 'metadata' });
    await run.toolCall({ ...step, toolName: 'charge', arguments: card });
    await run.toolCall({ ...step, sequenceIndex: 1, toolCallId: 'call_2', toolName: 'lookup', arguments: { q: 'x' } });
    expect(JSON.parse(sent[0])).toMatchObject({
      arguments: {},
      originalBytes: Buffer.byteLength(JSON.stringify(card)),
      producerRedacted: true,
      redaction: { persist: 'metadata' },
    });
    expect(sent[1]).not.toContain('producerRedacted');
    expect(sent[1]).not.toContain('redaction');
  });

  it("'metadata' publishes the size and no payload; null publishes neither", async () => {
    const { run, events } = capturingRun({ sized: () => 'metadata', hidden: () => null });
    await run.toolCall({ ...step, toolName: 'sized', arguments: card });
    await run.toolResult({ ...step, result: 'secret text' });
    await run.toolCall({ ...step, sequenceIndex: 1, toolName: 'hidden', arguments: card });
    await run.toolResult({ ...step, sequenceIndex: 1, result: card });
    const [sizedCall, sizedResult, hiddenCall, hiddenResult] = events();
    expect(sizedCall).toMatchObject({ arguments: {}, originalBytes: Buffer.byteLength(JSON.stringify(card)) });
    expect(sizedResult).toMatchObject({
      result: null,
      originalBytes: Buffer.byteLength('"secret text"'),
      redaction: { persist: 'metadata' },
    });
    expect(hiddenCall).toMatchObject({ arguments: {}, redaction: { persist: 'none' } });
    expect(hiddenResult).toMatchObject({ result: null, redaction: { persist: 'none' } });
    expect(hiddenCall).not.toHaveProperty('originalBytes');
    expect(hiddenResult).not.toHaveProperty('originalBytes');
    for (const event of events()) expect(parseToolEvent(JSON.stringify(event)).ok).toBe(true);
  });

  it('that throws fails the publication, naming the tool and the payload, and sends nothing of the batch', async () => {
    const { run, sent } = capturingRun({
      charge: (_payload, { kind }) => {
        if (kind === 'result') throw new Error('vault unreachable for 4111111111111111');
        return {};
      },
    });
    const failed = run.toolResults([
      { ...step, toolName: 'lookup', result: 'fine' },
      { ...step, sequenceIndex: 1, toolName: 'charge', result: card },
    ]);
    await expect(failed).rejects.toThrow(PersistHookError);
    await expect(failed).rejects.toThrow('persist hook of charge failed on its result; nothing was published');
    await expect(failed).rejects.not.toThrow('4111');
    expect(sent).toEqual([]);
  });

  it('that answers something other than a payload of its kind fails the publication', async () => {
    const { run, sent } = capturingRun({ charge: () => ['not', 'an', 'object'], nothing: () => undefined as unknown as PersistAnswer });
    await expect(run.toolCall({ ...step, toolName: 'charge', arguments: card })).rejects.toThrow(
      'persist hook of charge (arguments): must return arguments as a JSON object',
    );
    await expect(run.toolResult({ ...step, toolName: 'nothing', result: 'x' })).rejects.toThrow(InvalidToolEventError);
    expect(sent).toEqual([]);
  });

  it("is given a copy: a hook that edits the payload in place leaves the host's object alone", async () => {
    const args = { token: 'tok-1', q: 'x' };
    const { run, events } = capturingRun((payload) => {
      delete (payload as JsonObject).token;
      return payload;
    });
    await run.toolCall({ ...step, toolName: 'search', arguments: args });
    expect(args).toEqual({ token: 'tok-1', q: 'x' });
    expect(events()[0].arguments).toEqual({ q: 'x' });
  });

  it("refuses a result whose tool is unknown, rather than publish it without the host's hook", async () => {
    const { run, sent } = capturingRun({ charge: () => null });
    await expect(run.toolResult({ ...step, result: card })).rejects.toThrow('toolName is required with a result');
    expect(sent).toEqual([]);
    await run.toolResult({ ...step, toolName: 'charge', result: card });
    expect(JSON.parse(sent[0])).toMatchObject({ result: null, redaction: { persist: 'none' } });
  });

  it('runs before the limits, which cut what it returned', async () => {
    const long = 'x'.repeat(100);
    const { run, events } = capturingRun((payload) => ({ kept: (payload as JsonObject).kept, note: long }), {
      maxEventBytes: DEFAULT_MAX_EVENT_BYTES,
      maxResultChars: 30,
    });
    await run.toolResult({ ...step, toolName: 'fetch', result: { kept: 'yes', secret: 'tok-1'.repeat(50) } });
    const [event] = events();
    const returned = JSON.stringify({ kept: 'yes', note: long });
    expect(event.result).toBe(returned.slice(0, 30) + truncationMarker(returned.length - 30));
    expect(event).toMatchObject({ originalBytes: Buffer.byteLength(returned), producerRedacted: true, redaction: { persist: 'full' } });
    expect(JSON.stringify(event)).not.toContain('tok-1');
  });

  it('leaves a withheld result alone whatever the result limit', async () => {
    const { run, events } = capturingRun(() => 'metadata', { maxEventBytes: DEFAULT_MAX_EVENT_BYTES, maxResultChars: 1 });
    await run.toolResult({ ...step, toolName: 'fetch', result: 'a long text' });
    expect(events()[0]).toMatchObject({ result: null, originalBytes: 13 });
  });

  it('is checked when the publisher is made', () => {
    const make = (persist: unknown) => new ToolEventPublisher({ brokers: ['127.0.0.1:9'], persist: persist as PersistOption });
    expect(() => make('metadata')).toThrow('persist: must be a function, or an object of tool names and functions');
    expect(() => make({ charge: null })).toThrow('persist.charge: must be a function');
    expect(() => make({ charge: () => null })).not.toThrow();
  });

  it('for any payload and any answer: nothing the hook removed is published, and the event meets the contract', async () => {
    const SECRET = 'S3CRET-VALUE';
    const secretFree = fc
      .jsonValue({ maxDepth: 3 })
      .map((value) => value as JsonValue)
      .filter((value) => !JSON.stringify(value).includes(SECRET));
    const answer = fc.constantFrom('keep-redacted', 'metadata', 'none');
    await fc.assert(
      fc.asyncProperty(
        fc.dictionary(fc.string({ maxLength: 5 }), secretFree, { maxKeys: 4 }),
        secretFree.filter((value) => value !== null),
        answer,
        answer,
        fc.integer({ min: 1, max: 200 }),
        async (args, result, forArgs, forResult, maxResultChars) => {
          // The host's secret sits in the payload; the hook takes it out (or withholds the payload).
          const respond = (choice: string, payload: JsonValue): PersistAnswer => {
            if (choice === 'metadata') return 'metadata';
            if (choice === 'none') return null;
            const { secret: _removed, ...rest } = payload as JsonObject;
            return rest;
          };
          const { run, sent } = capturingRun((payload, { kind }) => respond(kind === 'arguments' ? forArgs : forResult, payload), {
            maxEventBytes: DEFAULT_MAX_EVENT_BYTES,
            maxResultChars,
          });
          await run.toolCall({ ...step, toolName: 'tool', arguments: { ...args, secret: SECRET } });
          await run.toolResult({ ...step, result: { value: result, secret: SECRET } });
          for (const value of sent) {
            expect(value).not.toContain(SECRET);
            expect(parseToolEvent(value).ok).toBe(true);
          }
        },
      ),
    );
  });
});
