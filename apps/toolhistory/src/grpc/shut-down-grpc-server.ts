import type { Server } from '@grpc/grpc-js';

/**
 * Stops accepting calls and lets the ones in flight finish; those still
 * running after `graceMs` are cancelled.
 */
export function shutDownGrpcServer(server: Server, graceMs: number): Promise<{ graceful: boolean; ms: number }> {
  const started = Date.now();
  return new Promise((done) => {
    const timer = setTimeout(() => {
      server.forceShutdown();
      done({ graceful: false, ms: Date.now() - started });
    }, graceMs);
    server.tryShutdown(() => {
      clearTimeout(timer);
      done({ graceful: true, ms: Date.now() - started });
    });
  });
}
