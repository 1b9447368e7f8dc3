import { type Server, type ServerUnaryCall, type ServerWritableStream, type sendUnaryData, status } from '@grpc/grpc-js';
import { service as healthService } from 'grpc-health-check';

export type ServingStatus = 'SERVING' | 'NOT_SERVING' | 'SERVICE_UNKNOWN';

interface HealthRequest {
  service: string;
}

interface Watch {
  service: string;
  call: ServerWritableStream<HealthRequest, { status: ServingStatus }>;
}

/** More open Watch streams than any fleet of probes needs; beyond it, RESOURCE_EXHAUSTED. */
const MAX_WATCHES = 1_000;

/**
 * grpc.health.v1.Health (Check and Watch) on the gRPC server, beside
 * ToolHistory and outside its caller check: probes need no token. Unlike
 * grpc-health-check's implementation it can end its Watch streams, which a
 * graceful shutdown needs: an open Watch would otherwise hold the server
 * until the grace period runs out.
 */
export class HealthEndpoint {
  private readonly statuses: Map<string, ServingStatus>;
  private readonly watches = new Set<Watch>();

  constructor(initial: Readonly<Record<string, ServingStatus>>) {
    this.statuses = new Map(Object.entries(initial));
  }

  status(service: string): ServingStatus {
    return this.statuses.get(service) ?? 'SERVICE_UNKNOWN';
  }

  setStatus(service: string, serving: ServingStatus): void {
    this.statuses.set(service, serving);
    for (const watch of this.watches) if (watch.service === service) watch.call.write({ status: serving });
  }

  addToServer(server: Server): void {
    server.addService(healthService, {
      check: (call: ServerUnaryCall<HealthRequest, unknown>, callback: sendUnaryData<{ status: ServingStatus }>) => {
        const serving = this.statuses.get(call.request.service);
        if (serving) callback(null, { status: serving });
        else
          callback({
            code: status.NOT_FOUND,
            details: `no health status for service ${JSON.stringify(call.request.service.slice(0, 256))}`,
          });
      },
      watch: (call: Watch['call']) => {
        if (this.watches.size >= MAX_WATCHES) {
          call.emit('error', { code: status.RESOURCE_EXHAUSTED, details: 'too many health watches' });
          return;
        }
        const watch = { service: call.request.service, call };
        this.watches.add(watch);
        call.on('cancelled', () => this.watches.delete(watch));
        call.write({ status: this.statuses.get(watch.service) ?? 'SERVICE_UNKNOWN' });
      },
    });
  }

  /** Ends every Watch stream with UNAVAILABLE (after the NOT_SERVING it was sent), so the server can stop. */
  endWatches(): number {
    const ended = this.watches.size;
    for (const { call } of this.watches) call.emit('error', { code: status.UNAVAILABLE, details: 'server shutting down' });
    this.watches.clear();
    return ended;
  }
}
