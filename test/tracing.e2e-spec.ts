import * as grpc from '@grpc/grpc-js';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Producer } from 'kafkajs';
import type { FreshSchema } from './support/fresh-schema';
import { toolHistoryClient, ToolHistoryTestClient } from './support/grpc-client';
import { connectedProducer, testKafka } from './support/kafka-fixtures';
import { uniqueName } from './support/test-environment';
import { runCompleted, toolCall, toolResult } from './support/tool-event-factory';
import { type RunningStack, startRunningStack } from './support/running-stack';
import { waitFor } from './support/wait-for';

/** A span as OTLP/HTTP JSON carries it (ids in hex). */
interface ExportedSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  links?: Array<{ traceId: string; spanId: string }>;
  attributes?: Array<{ key: string; value: Record<string, unknown> }>;
}

const hex = (bytes: number) =>
  Array.from({ length: bytes }, () =>
    Math.floor(Math.random() * 256)
      .toString(16)
      .padStart(2, '0'),
  ).join('');

describe("traces over OTLP/HTTP, continuing the producers' and callers' trace contexts (real broker, real collector endpoint)", () => {
  let stack: RunningStack;
  let producer: Producer;
  let db: FreshSchema;
  let client: ToolHistoryTestClient;
  let collector: Server;
  let topic: string;
  const spans: ExportedSpan[] = [];
  const bodies: string[] = [];
  const tenantId = uniqueName('tenant');
  const conversationId = uniqueName('conv');
  const scope = { tenantId, conversationId, runId: 'r1', channel: 'support' };
  const recent = (s: number) => new Date(Date.now() - 60_000 + s * 1000).toISOString();
  const producerTrace = hex(16);
  const producerSpan = hex(8);
  const traceparent = `00-${producerTrace}-${producerSpan}-01`;

  beforeAll(async () => {
    // The collector: an OTLP/HTTP endpoint on loopback that keeps what it is sent.
    collector = createServer((req, res) => {
      let body = '';
      req.setEncoding('utf8').on('data', (c: string) => (body += c));
      req.on('end', () => {
        bodies.push(`${req.method} ${req.url} ${req.headers['content-type']}`);
        if (req.url === '/v1/traces' && req.headers['content-type']?.startsWith('application/json')) {
          const parsed = JSON.parse(body) as { resourceSpans: Array<{ scopeSpans: Array<{ spans: ExportedSpan[] }> }> };
          for (const r of parsed.resourceSpans) for (const s of r.scopeSpans) spans.push(...s.spans);
        }
        res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      });
    });
    await new Promise<void>((r) => collector.listen(0, '127.0.0.1', r));
    stack = await startRunningStack('tracing', {
      env: {
        OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${(collector.address() as AddressInfo).port}`,
        OTEL_SERVICE_NAME: 'toolhistory-under-test',
      },
    });
    ({ topic, db } = stack);
    producer = await connectedProducer(testKafka());
    client = toolHistoryClient(Number(stack.address.split(':')[1]));
  });

  afterAll(async () => {
    client?.close();
    await stack?.stop();
    await producer?.disconnect();
    await new Promise((r) => collector?.close(r));
  });

  it("records a batch in a span that continues the messages' trace, with its queries inside, and keeps the trace beside each event", async () => {
    const events = [
      toolCall(scope, { roundIndex: 0, sequenceIndex: 0, toolCallId: 'c1', toolName: 'lookup', occurredAt: recent(0) }),
      toolResult(scope, { roundIndex: 0, sequenceIndex: 0, toolCallId: 'c1', occurredAt: recent(1) }),
      runCompleted(scope, { occurredAt: recent(2) }),
    ];
    await producer.send({
      topic,
      acks: -1,
      messages: events.map((e) => ({ key: conversationId, value: JSON.stringify(e), headers: { traceparent } })),
    });
    const batch = await waitFor(
      async () => spans.find((s) => s.name === 'toolhistory record batch' && s.traceId === producerTrace),
      (s) => s !== undefined,
      { what: `the batch span in the producer's trace (collector saw: ${bodies.slice(-3).join('; ')})` },
    );
    expect(batch!.parentSpanId).toBe(producerSpan);
    expect(batch!.links).toEqual([expect.objectContaining({ traceId: producerTrace, spanId: producerSpan })]);
    expect(batch!.attributes).toEqual(expect.arrayContaining([{ key: 'messaging.destination.name', value: { stringValue: topic } }]));
    // The recording transaction's statements, as children in the same trace.
    const queries = await waitFor(
      async () => spans.filter((s) => s.traceId === producerTrace && s.parentSpanId === batch!.spanId),
      (q) => q.length > 3,
      { what: "the batch's database spans" },
    );
    expect(queries.map((q) => q.name)).toEqual(expect.arrayContaining([expect.stringMatching(/^pg\.query/)]));

    const { rows } = await db.pool.query(
      `SELECT traceparent, payload::jsonb ? 'traceparent' AS in_payload FROM events ORDER BY global_position`,
    );
    expect(rows).toEqual(events.map(() => ({ traceparent, in_payload: false })));
    const listed = await client.listToolInvocations({ tenant_id: tenantId, conversation_id: conversationId });
    expect(listed.invocations.map((i) => i.trace_id)).toEqual([producerTrace]);
  });

  it("continues a caller's trace in the gRPC server span of its call", async () => {
    const callerTrace = hex(16);
    const metadata = new grpc.Metadata();
    metadata.set('traceparent', `00-${callerTrace}-${hex(8)}-01`);
    await client.getReplayHistory({ tenant_id: tenantId, conversation_id: conversationId }, { metadata });
    const server = await waitFor(
      async () => spans.find((s) => s.traceId === callerTrace && s.kind === 2),
      (s) => s !== undefined,
      { what: 'the server span of the replay call' },
    );
    expect(server!.name).toBe('grpc.toolhistory.v1.ToolHistory/GetReplayHistory');
  });
});
