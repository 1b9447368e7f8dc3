import { type Server, ServerCredentials } from '@grpc/grpc-js';
import { type GrpcOptions, Transport } from '@nestjs/microservices';
import type { HealthEndpoint } from './health-endpoint';
import type { AppConfig } from '@toolhistory/config';
import { findProjectFile } from '../find-project-file';
import type { PackageDefinition } from '@grpc/proto-loader';
import type { ServiceMetrics } from '../observability/service-metrics';
import { grpcCallMetrics } from './grpc-call-metrics';
import type { ReadAdmission } from '../admission/read-admission';
import { admissionInterceptor } from './admission-interceptor';
import { writeMemoizedResponses } from './memoized-response';

export const TOOL_HISTORY_PROTO = 'proto/toolhistory/v1/toolhistory.proto';

/** `host:port` as grpc-js binds it (IPv6 addresses in brackets). */
export function bindAddress(host: string, port: number): string {
  return host.includes(':') && !host.startsWith('[') ? `[${host}]:${port}` : `${host}:${port}`;
}

/** TLS when a certificate is configured, requiring client certificates when a client CA is; otherwise plaintext. */
export function serverCredentials(tls: AppConfig['grpc']['tls']): ServerCredentials {
  if (tls === null) return ServerCredentials.createInsecure();
  return ServerCredentials.createSsl(
    tls.clientCa,
    [{ cert_chain: tls.certChain, private_key: tls.privateKey.reveal() }],
    tls.clientCa !== null,
  );
}

/**
 * Options of the gRPC transport: the ToolHistory service and, beside it,
 * grpc.health.v1.Health; the bind address, credentials, request size and
 * HTTP/2 limits from the config; every call timed into `metrics`, then reads
 * admitted (or refused) by `admission` before NestJS sees them. `onServer`
 * receives the grpc-js server, whose graceful shutdown NestJS does not bound.
 */
export function grpcServerOptions(
  grpc: AppConfig['grpc'],
  health: HealthEndpoint,
  metrics: ServiceMetrics,
  admission: ReadAdmission,
  onServer: (server: Server) => void,
): GrpcOptions {
  return {
    transport: Transport.GRPC,
    options: {
      package: 'toolhistory.v1',
      protoPath: findProjectFile(TOOL_HISTORY_PROTO),
      url: bindAddress(grpc.host, grpc.port),
      credentials: serverCredentials(grpc.tls),
      // grpc-js answers a larger request RESOURCE_EXHAUSTED before any handler runs.
      maxReceiveMessageLength: grpc.maxRequestBytes,
      // grpc-js takes its server options here. Interceptors see every call, refused ones included: the metrics
      // first (so refusals are timed too), then admission. The HTTP/2 limits bound what one connection may hold
      // (docs/adr/031-http2-limits-under-a-flood.md); grpc-js would otherwise lift Node's session memory limit.
      channelOptions: {
        interceptors: [grpcCallMetrics(metrics), admissionInterceptor(admission)],
        'grpc.max_concurrent_streams': grpc.maxConcurrentStreams,
        'grpc-node.max_session_memory': grpc.maxSessionMemoryMb,
      } as GrpcOptions['options']['channelOptions'],
      loader: { keepCase: true, longs: String, enums: String, defaults: false, oneofs: true },
      onLoadPackageDefinition: (pkg: PackageDefinition, server: Server) => {
        // A cached replay history goes out as the bytes it was encoded to the first time.
        writeMemoizedResponses(pkg, 'toolhistory.v1.ToolHistory', ['GetReplayHistory']);
        health.addToServer(server);
        onServer(server);
      },
    },
  };
}

/** Until the first health check, nothing is served. */
export const SERVICE_NAMES_NOT_SERVING = { '': 'NOT_SERVING', 'toolhistory.v1.ToolHistory': 'NOT_SERVING' } as const;
