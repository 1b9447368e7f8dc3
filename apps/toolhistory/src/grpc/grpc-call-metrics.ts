import { ResponderBuilder, ServerInterceptingCall, ServerListenerBuilder, type ServerInterceptor, status } from '@grpc/grpc-js';
import type { ServiceMetrics } from '../observability/service-metrics';

const STATUS_NAMES = new Map<number, string>(Object.entries(status).map(([name, code]) => [code as number, name]));

/**
 * Times every call the gRPC server answers (ToolHistory, health,
 * reflection), including those the caller check refuses, from its arrival
 * to its status; a call the caller cancels counts as CANCELLED. Methods are
 * the server's own paths, so the label stays bounded.
 */
export function grpcCallMetrics(metrics: ServiceMetrics): ServerInterceptor {
  return (method, call) => {
    const started = process.hrtime.bigint();
    let done = false;
    const observe = (code: number) => {
      if (done) return;
      done = true;
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      metrics.grpcHandling.observe({ method: method.path, code: STATUS_NAMES.get(code) ?? String(code) }, seconds);
    };
    return new ServerInterceptingCall(
      call,
      new ResponderBuilder()
        .withStart((next) => next(new ServerListenerBuilder().withOnCancel(() => observe(status.CANCELLED)).build()))
        .withSendStatus((sent, next) => {
          observe(sent.code);
          next(sent);
        })
        .build(),
    );
  };
}
