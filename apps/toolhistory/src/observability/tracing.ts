import { context, propagation, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { registerInstrumentations } from '@opentelemetry/instrumentation';
import { GrpcInstrumentation } from '@opentelemetry/instrumentation-grpc';
import { PgInstrumentation } from '@opentelemetry/instrumentation-pg';
import { PinoInstrumentation } from '@opentelemetry/instrumentation-pino';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BatchSpanProcessor, SimpleSpanProcessor, type SpanExporter, TracerProvider } from '@opentelemetry/sdk-trace';
import { ATTR_SERVICE_NAME, ATTR_SERVICE_VERSION } from '@opentelemetry/semantic-conventions';

export interface Tracing {
  /** Exports what is left and stops. */
  shutdown(): Promise<void>;
}

export interface TracingSettings {
  serviceName: string;
  serviceVersion: string;
  exporter: SpanExporter;
  /** Batches spans for export (the service); one by one for tests that read them at once. */
  batch?: boolean;
}

/** The OTLP/HTTP exporter of a collector's base URL (`/v1/traces` is added). */
export const otlpExporter = (endpoint: string): SpanExporter => new OTLPTraceExporter({ url: `${endpoint.replace(/\/+$/, '')}/v1/traces` });

/**
 * Installs the global tracer provider, W3C trace-context propagation and the
 * instrumentations of grpc-js (server spans, continuing a caller's
 * `traceparent`), pg (a span per query) and pino (trace and span ids in log
 * lines). Call it before those modules are loaded: their instrumentation
 * hooks `require`.
 */
export function startTracing(settings: TracingSettings): Tracing {
  const provider = new TracerProvider({
    resource: resourceFromAttributes({ [ATTR_SERVICE_NAME]: settings.serviceName, [ATTR_SERVICE_VERSION]: settings.serviceVersion }),
    spanProcessors: [
      settings.batch === false
        ? new SimpleSpanProcessor({ exporter: settings.exporter })
        : new BatchSpanProcessor({ exporter: settings.exporter, scheduledDelayMillis: 1_000 }),
    ],
  });
  const contextManager = new AsyncLocalStorageContextManager().enable();
  context.setGlobalContextManager(contextManager);
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  trace.setGlobalTracerProvider(provider);
  const unregister = registerInstrumentations({
    tracerProvider: provider,
    instrumentations: [new GrpcInstrumentation(), new PgInstrumentation({ requireParentSpan: true }), new PinoInstrumentation()],
  });
  return {
    async shutdown() {
      unregister();
      await provider.shutdown();
      trace.disable();
      propagation.disable();
      context.disable();
    },
  };
}
