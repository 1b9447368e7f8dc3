import { GrpcOptions, Transport } from '@nestjs/microservices';
import type { HealthImplementation } from 'grpc-health-check';
import { findProjectFile } from '../find-project-file';

export const TOOL_HISTORY_PROTO = 'proto/toolhistory/v1/toolhistory.proto';

/** Options of the gRPC transport: the ToolHistory service and, beside it, grpc.health.v1.Health. */
export function grpcServerOptions(port: number, health: HealthImplementation): GrpcOptions {
  return {
    transport: Transport.GRPC,
    options: {
      package: 'toolhistory.v1',
      protoPath: findProjectFile(TOOL_HISTORY_PROTO),
      url: `0.0.0.0:${port}`,
      loader: { keepCase: true, longs: String, enums: String, defaults: false, oneofs: true },
      onLoadPackageDefinition: (_pkg: unknown, server: Parameters<HealthImplementation['addToServer']>[0]) => health.addToServer(server),
    },
  };
}

/** Until the first health check, nothing is served. */
export const SERVICE_NAMES_NOT_SERVING = { '': 'NOT_SERVING', 'toolhistory.v1.ToolHistory': 'NOT_SERVING' } as const;
