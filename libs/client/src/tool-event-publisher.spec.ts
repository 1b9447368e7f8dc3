import { parseToolEvent } from '../../contract/src/parse-tool-event';
import { DEFAULT_MAX_EVENT_BYTES } from '../../contract/src/tool-event.types';
import { TRUNCATION_TAIL, truncationMarker } from '../../contract/src/truncation-marker';
import { deriveEventId } from './event-ids';
import {
  type PayloadLimits,
  prepareEvents,
  type PublishedEvent,
  RunPublisher,
  type RunScope,
  ToolEventPublisher,
} from './tool-event-publisher';
import { InvalidToolEventError } from './tool-history-errors';

const scope: RunScope = { tenantId: 'acme', conversationId: 'conv-1', channel: 'web', runId: 'run-7' };
const NOW = new Date('2026-11-02T10:15:30.123Z');

/** A real RunPublisher whose events are prepared as ToolEventPublisher prepares them, and kept instead of sent. */
function capturingRun(runScope: RunScope = scope, limits: PayloadLimits = { maxEventBytes: DEFAULT_MAX_EVENT_BYTES }) {
  const sent: string[] = [];
  const run = new RunPublisher(runScope, async (batch): Promise<PublishedEvent[]> => {
    const prepared = prepareEvents(runScope, batch, limits, NOW);
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

const step = { roundIndex: 1, sequenceIndex: 0, toolCallId: 'call_refund1' };

describe('RunPublisher', () => {
  it('sends events within the limits byte for byte as before', async () => {
    const { run, sent } = capturingRun();
    await run.toolCall({ ...step, toolName: 'refund', arguments: { amount: 120 } });
    await run.toolResult({ ...step, result: 'refunded' });
    await run.complete({ assistantMessageId: 'msg-2' });
    const envelope = (type: string, id: string) =>
      `{"eventId":"${id}","type":"${type}","schemaVersion":2,"tenantId":"acme","conversationId":"conv-1","channel":"web","runId":"run-7","occurredAt":"2026-11-02T10:15:30.123Z"`;
    expect(sent).toEqual([
      `${envelope('ToolCallRequested', deriveEventId(scope, { type: 'ToolCallRequested', ...step }))},"roundIndex":1,"sequenceIndex":0,"toolCallId":"call_refund1","toolName":"refund","arguments":{"amount":120}}`,
      `${envelope('ToolResultReceived', deriveEventId(scope, { type: 'ToolResultReceived', ...step }))},"toolCallId":"call_refund1","roundIndex":1,"sequenceIndex":0,"result":"refunded","isError":false}`,
      `${envelope('RunCompleted', deriveEventId(scope, { type: 'RunCompleted' }))},"assistantMessageId":"msg-2","finishReason":"stop"}`,
    ]);
  });

  it('says what the final answer cites when asked to, and nothing when not', async () => {
    const { run, events, sent } = capturingRun();
    await run.complete({ assistantMessageId: 'msg-2', citedSources: [2, 4] });
    await run.complete({ assistantMessageId: 'msg-3', citedSources: [] });
    await run.complete({ assistantMessageId: 'msg-4' });
    expect(events().map((event) => event.citedSources)).toEqual([[2, 4], [], undefined]);
    for (const value of sent) expect(parseToolEvent(value).ok).toBe(true);
    await expect(run.complete({ assistantMessageId: 'msg-5', citedSources: [-1] })).rejects.toThrow(InvalidToolEventError);
  });

  it("keeps the token of the run's last published event, for reads in another process", async () => {
    const { run } = capturingRun();
    expect(run.consistencyToken).toBe('');
    await run.toolCalls([
      { ...step, toolName: 'refund', arguments: {} },
      { roundIndex: 1, sequenceIndex: 1, toolCallId: 'call_refund2', toolName: 'refund', arguments: {} },
    ]);
    expect(run.consistencyToken).toBe('ct1:k:agent.tool-events:0:1');
    await run.complete({ assistantMessageId: 'msg-2' });
    expect(run.consistencyToken).toBe('ct1:k:agent.tool-events:0:2');
  });

  it("puts the run's userMessageId on every event of the run", async () => {
    const { run, events } = capturingRun({ ...scope, userMessageId: 'msg-user-1' });
    await run.toolCall({ ...step, toolName: 'refund', arguments: {} });
    await run.approvalRequested(step);
    await run.fail({ error: { code: 'awaiting_approval', message: 'waits for a person' } });
    expect(events().map((event) => event.userMessageId)).toEqual(['msg-user-1', 'msg-user-1', 'msg-user-1']);
  });

  it('publishes a request for approval and the answer, keyed like the call', async () => {
    const { run, events, sent } = capturingRun();
    const asked = await run.approvalRequested({ ...step, reason: 'refunds over 100 EUR need a person' });
    const bare = await run.approvalRequested({ ...step, roundIndex: 2 });
    const answered = await run.approvalDecided({ ...step, approved: false, reason: 'already refunded', decidedBy: 'desk-3' });
    const approved = await run.approvalDecided({ ...step, roundIndex: 2, approved: true });
    expect(events()).toEqual([
      expect.objectContaining({ type: 'ToolApprovalRequested', ...step, reason: 'refunds over 100 EUR need a person' }),
      expect.objectContaining({ type: 'ToolApprovalRequested', ...step, roundIndex: 2 }),
      expect.objectContaining({ type: 'ToolApprovalDecided', ...step, approved: false, reason: 'already refunded', decidedBy: 'desk-3' }),
      expect.objectContaining({ type: 'ToolApprovalDecided', ...step, roundIndex: 2, approved: true }),
    ]);
    expect(events()[1]).not.toHaveProperty('reason');
    expect(events()[3]).not.toHaveProperty('reason');
    expect(events()[3]).not.toHaveProperty('decidedBy');
    expect(asked.eventId).toBe(deriveEventId(scope, { type: 'ToolApprovalRequested', ...step }));
    expect(answered.eventId).toBe(deriveEventId(scope, { type: 'ToolApprovalDecided', ...step }));
    expect(new Set([asked, bare, answered, approved].map((published) => published.eventId)).size).toBe(4);
    for (const value of sent) expect(parseToolEvent(value).ok).toBe(true);
  });

  it('refuses a request for approval without a toolCallId, naming it', async () => {
    const { run, sent } = capturingRun();
    await expect(run.approvalRequested({ ...step, toolCallId: '' })).rejects.toThrow(
      new InvalidToolEventError(['toolCallId must NOT have fewer than 1 characters']),
    );
    expect(sent).toEqual([]);
  });

  it("reports a failed run's usage", async () => {
    const { run, events } = capturingRun();
    const usage = [{ inputTokens: 900, outputTokens: 12, model: 'gpt-test' }];
    await run.fail({ error: { code: 'timeout', message: 'the model did not answer' }, usage });
    await run.fail({ error: { code: 'timeout', message: 'again' }, eventId: '1b4e28ba-2fa1-4d3b-a3f5-ef19b5a7633b' });
    expect(events()[0]).toMatchObject({ type: 'RunFailed', error: { code: 'timeout', message: 'the model did not answer' }, usage });
    expect(events()[1]).not.toHaveProperty('usage');
  });

  describe("cuts a result to its tool's maxResultChars", () => {
    const limits: PayloadLimits = { maxEventBytes: DEFAULT_MAX_EVENT_BYTES, maxResultChars: { defaults: 50, tools: { fetch_page: 10 } } };
    const page = 'p'.repeat(100);

    it.each([
      ['the tool of the call this run published for the step', {}, 10],
      ['the toolName given with the result', { toolName: 'fetch_page' }, 10],
      ['the toolName given with the result, over the call', { toolName: 'other' }, 50],
    ])('knowing it from %s', async (_case, extra, limit) => {
      const { run, events } = capturingRun(scope, limits);
      await run.toolCall({ ...step, toolName: 'fetch_page', arguments: { url: 'https://example.com' } });
      await run.toolResult({ ...step, result: page, ...extra });
      expect(events()[1]).toMatchObject({ result: 'p'.repeat(limit) + truncationMarker(100 - limit), originalBytes: 102 });
    });

    it('and a result of a call it did not publish to the default', async () => {
      const { run, events } = capturingRun(scope, limits);
      await run.toolCall({ ...step, toolName: 'fetch_page', arguments: {} });
      await run.toolResults([
        { ...step, toolCallId: 'another', result: page },
        { ...step, sequenceIndex: 1, result: page },
        { ...step, result: page },
      ]);
      expect(events().map((event) => event.result)).toEqual([
        undefined,
        'p'.repeat(50) + truncationMarker(50),
        'p'.repeat(50) + truncationMarker(50),
        'p'.repeat(10) + truncationMarker(90),
      ]);
    });
  });

  it('cuts a payload that would make its event too large, and sends the rest of the batch as it is', async () => {
    const { run, events, sent } = capturingRun(scope, { maxEventBytes: 2_000 });
    await run.toolCalls([
      { ...step, toolName: 'search', arguments: { query: 'q'.repeat(5_000) } },
      { ...step, sequenceIndex: 1, toolName: 'search', arguments: { query: 'short' } },
    ]);
    await run.toolResult({ ...step, result: { hits: Array.from({ length: 500 }, (_, i) => `hit ${i}`) } });
    expect(events()[0].arguments).toEqual({ truncatedArguments: expect.stringMatching(/^\{"query":"q+…\[truncated [\d,]+ chars\]$/) });
    expect(events()[1].arguments).toEqual({ query: 'short' });
    expect(events()[1]).not.toHaveProperty('originalBytes');
    expect(events()[2].result).toMatch(TRUNCATION_TAIL);
    for (const value of sent) {
      expect(Buffer.byteLength(value)).toBeLessThanOrEqual(2_000);
      expect(parseToolEvent(value, 2_000).ok).toBe(true);
    }
  });

  it('sends none of a batch when one of its events cannot be made to fit', async () => {
    const { run, sent } = capturingRun(scope, { maxEventBytes: 400 });
    await expect(
      run.toolCalls([
        { ...step, toolName: 'search', arguments: { query: 'q' } },
        { ...step, sequenceIndex: 1, toolCallId: 'c'.repeat(200), toolName: 'search', arguments: { query: 'q'.repeat(1_000) } },
      ]),
    ).rejects.toThrow(/^invalid tool event: event is \d+ bytes, larger than the limit of 400 bytes, and still is with its arguments cut/);
    expect(sent).toEqual([]);
  });
});

describe('ToolEventPublisher options', () => {
  // Constructing a publisher opens no connection: these need no broker.
  const brokers = ['127.0.0.1:9092'];

  it.each([
    [{ maxEventBytes: 0 }, 'maxEventBytes: must be a whole number of bytes, 1 or more (got 0)'],
    [{ maxEventBytes: 1.5 }, 'maxEventBytes: must be a whole number of bytes, 1 or more (got 1.5)'],
    [
      { maxResultChars: { tools: { fetch_page: 0 } } },
      'maxResultChars.tools.fetch_page: must be a whole number of characters, 1 or more (got 0)',
    ],
  ])('refuses %j', (options, message) => {
    expect(() => new ToolEventPublisher({ brokers, ...options })).toThrow(new TypeError(message));
  });

  it('refuses an empty userMessageId in a run scope', () => {
    const publisher = new ToolEventPublisher({ brokers, maxEventBytes: 2 * DEFAULT_MAX_EVENT_BYTES, maxResultChars: 5_000 });
    expect(() => publisher.run({ ...scope, userMessageId: '' })).toThrow(/^userMessageId: must be a non-empty string when given/);
    expect(publisher.run({ ...scope, userMessageId: 'msg-user-1' }).scope).toEqual({ ...scope, userMessageId: 'msg-user-1' });
  });
});
