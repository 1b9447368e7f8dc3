import { InMemorySpanExporter } from '@opentelemetry/sdk-trace';
import { SpanStatusCode } from '@opentelemetry/api';
import { startTracing, type Tracing } from '../observability/tracing';
import { inBatchSpan, traceparentOf } from './batch-trace';

const T1 = '4bf92f3577b34da6a3ce929d0e0e4736';
const T2 = '0af7651916cd43dd8448eb211c80319c';
const S1 = '00f067aa0ba902b7';
const S2 = 'b7ad6b7169203331';

describe('the span that records a batch (in-memory exporter)', () => {
  let exporter: InMemorySpanExporter;
  let tracing: Tracing;

  beforeAll(() => {
    exporter = new InMemorySpanExporter();
    tracing = startTracing({ serviceName: 'test', serviceVersion: '0', exporter, batch: false });
  });
  afterAll(() => tracing.shutdown());
  beforeEach(() => exporter.reset());

  const batch = (...traceparents: Array<string | undefined>) => ({
    topic: 'events',
    partition: 1,
    messages: traceparents.map((traceparent) => ({ traceparent })),
  });

  it('is the child of the trace its messages share, and links to it', async () => {
    await inBatchSpan(batch(`00-${T1}-${S1}-01`, `00-${T1}-${S1}-01`, undefined), async () => undefined);
    const [span] = exporter.getFinishedSpans();
    expect(span.name).toBe('toolhistory record batch');
    expect(span.spanContext().traceId).toBe(T1);
    expect(span.parentSpanContext?.spanId).toBe(S1);
    expect(span.links.map((l) => l.context.spanId)).toEqual([S1]);
    expect(span.attributes).toMatchObject({ 'messaging.destination.partition.id': '1', 'messaging.batch.message_count': 3 });
  });

  it('starts its own trace when the messages come from several, linking to each', async () => {
    await inBatchSpan(batch(`00-${T1}-${S1}-01`, `00-${T2}-${S2}-01`), async () => undefined);
    const [span] = exporter.getFinishedSpans();
    expect(span.parentSpanContext).toBeUndefined();
    expect([T1, T2]).not.toContain(span.spanContext().traceId);
    expect(span.links.map((l) => l.context.traceId)).toEqual([T1, T2]);
  });

  it('ends with an error status when recording fails, and passes the failure on', async () => {
    await expect(inBatchSpan(batch(), async () => Promise.reject(new Error('database down')))).rejects.toThrow('database down');
    const [span] = exporter.getFinishedSpans();
    expect(span.status).toEqual({ code: SpanStatusCode.ERROR, message: 'database down' });
    expect(span.links).toEqual([]);
  });
});

describe('traceparentOf', () => {
  it('keeps a well-formed W3C traceparent, lower-cased, and the four fields of a later version', () => {
    expect(traceparentOf(Buffer.from(`00-${T1.toUpperCase()}-${S1}-01`))).toBe(`00-${T1}-${S1}-01`);
    expect(traceparentOf(`01-${T1}-${S1}-01-future-field`)).toBe(`01-${T1}-${S1}-01`);
  });

  it('drops what the spec says to ignore', () => {
    for (const bad of [
      undefined,
      '',
      'not a trace',
      `00-${'0'.repeat(32)}-${S1}-01`, // all-zero trace id
      `00-${T1}-${'0'.repeat(16)}-01`, // all-zero span id
      `ff-${T1}-${S1}-01`, // version ff
      `00-${T1}-${S1}-01-extra`, // version 00 has exactly four fields
      `00-${T1.slice(1)}-${S1}-01`,
    ]) {
      expect(traceparentOf(bad)).toBeUndefined();
    }
  });
});
