import { context, type Link, propagation, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';

const tracer = trace.getTracer('toolhistory-recorder');

/** W3C traceparent, version 00 (other versions are read by their first four fields, as the spec asks). */
const TRACEPARENT = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-.*)?$/;

/** The message's W3C trace context when it is well formed (lower-cased, version 00 fields only), else undefined. */
export function traceparentOf(header: Buffer | string | undefined): string | undefined {
  if (header === undefined) return undefined;
  const text = header.toString().trim().toLowerCase();
  const match = TRACEPARENT.exec(text);
  if (!match || match[1] === 'ff' || /^0+$/.test(match[2]) || /^0+$/.test(match[3])) return undefined;
  if (match[1] === '00' && match[5] !== undefined) return undefined;
  return `${match[1]}-${match[2]}-${match[3]}-${match[4]}`;
}

const contextOf = (traceparent: string) => propagation.extract(ROOT_CONTEXT, { traceparent });

/** Spans link to at most this many producers' traces; past it, the first ones. */
const MAX_LINKS = 128;

export interface TracedBatch {
  topic: string;
  partition: number;
  messages: ReadonlyArray<{ traceparent?: string }>;
}

/**
 * Runs the recording of one partition batch in a span that continues the
 * producers' traces: the child of the messages' trace context when they
 * share one, and linked to each distinct one either way (a batch gathers
 * many producers' messages). Without tracing configured, the API's no-op
 * tracer makes this a plain call.
 */
export function inBatchSpan<T>(batch: TracedBatch, work: () => Promise<T>): Promise<T> {
  const distinct = [...new Set(batch.messages.flatMap((m) => (m.traceparent ? [m.traceparent] : [])))];
  const links: Link[] = distinct.slice(0, MAX_LINKS).flatMap((tp) => {
    const spanContext = trace.getSpanContext(contextOf(tp));
    return spanContext ? [{ context: spanContext }] : [];
  });
  const parent = distinct.length === 1 ? contextOf(distinct[0]) : context.active();
  return tracer.startActiveSpan(
    'toolhistory record batch',
    {
      kind: SpanKind.CONSUMER,
      links,
      attributes: {
        'messaging.system': 'kafka',
        'messaging.operation.type': 'process',
        'messaging.destination.name': batch.topic,
        'messaging.destination.partition.id': String(batch.partition),
        'messaging.batch.message_count': batch.messages.length,
      },
    },
    parent,
    async (span) => {
      try {
        return await work();
      } catch (error) {
        span.recordException(error as Error);
        span.setStatus({ code: SpanStatusCode.ERROR, message: (error as Error).message });
        throw error;
      } finally {
        span.end();
      }
    },
  );
}
