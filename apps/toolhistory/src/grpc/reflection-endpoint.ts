import type { Server, ServerDuplexStream } from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import { ReflectionService } from '@grpc/reflection';
import type { CallerAuthenticator } from '@toolhistory/domain';
import { toAppError } from '@toolhistory/errors';
import { findProjectFile } from '../find-project-file';
import { TOOL_HISTORY_PROTO } from './grpc-server-options';
import { grpcStatusOf } from './grpc-status';

type Handler = (call: ServerDuplexStream<unknown, unknown>) => void;

/**
 * gRPC server reflection (v1 and v1alpha), so grpcurl and Postman work
 * without the proto file. It tells the API's shape, not its data, so any
 * verified caller may use it, whatever its scopes and tenants; with
 * authentication configured, a caller without a valid token is refused
 * like on every other RPC.
 */
export function addReflection(server: Server, authenticator: CallerAuthenticator): void {
  const definition = protoLoader.loadSync(findProjectFile(TOOL_HISTORY_PROTO), {
    keepCase: true,
    longs: String,
    enums: String,
    oneofs: true,
  });
  new ReflectionService(definition).addToServer({
    addService: (service, implementation) =>
      server.addService(
        service,
        Object.fromEntries(Object.entries(implementation).map(([name, handler]) => [name, verified(handler as Handler, authenticator)])),
      ),
  });
}

function verified(handler: Handler, authenticator: CallerAuthenticator): Handler {
  return (call) => {
    // The caller's messages wait in the stream's buffer until the handler reads them.
    authenticator.authenticate(call.metadata.get('authorization').map(String)).then(
      () => handler(call),
      (thrown: unknown) => {
        const error = toAppError(thrown);
        call.emit('error', { code: grpcStatusOf(error), details: error.message });
      },
    );
  };
}
