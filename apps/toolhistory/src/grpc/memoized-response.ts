import type { PackageDefinition } from '@grpc/proto-loader';

/**
 * A response message that is encoded once, on its first write, and written
 * as those bytes every time after: what a handler returns for an answer it
 * gives again and again (a cached replay history), so a hit costs a socket
 * write and no protobuf encoding.
 */
export class MemoizedResponse {
  bytes?: Buffer;

  constructor(readonly message: object) {}
}

interface SerializingMethod {
  responseSerialize: (value: unknown) => Buffer;
}

/**
 * Makes the named methods of `service` write a MemoizedResponse's bytes
 * (encoding its message the first time); any other value is encoded as
 * before. Called on the package definition before the server is built
 * from it.
 */
export function writeMemoizedResponses(pkg: PackageDefinition, service: string, methods: readonly string[]): void {
  const definition = pkg[service] as unknown as Record<string, SerializingMethod | undefined>;
  for (const name of methods) {
    const method = definition?.[name];
    if (!method) throw new Error(`${service}/${name} is not in the package definition`);
    const encode = method.responseSerialize;
    method.responseSerialize = (value) => (value instanceof MemoizedResponse ? (value.bytes ??= encode(value.message)) : encode(value));
  }
}
