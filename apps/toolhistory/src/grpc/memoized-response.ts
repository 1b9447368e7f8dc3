import type { PackageDefinition } from '@grpc/proto-loader';
import { BaseServerInterceptingCall } from '@grpc/grpc-js/build/src/server-interceptors';

/**
 * A response message that is encoded once, on its first write, and written
 * as those bytes every time after: what a handler returns for an answer it
 * gives again and again (a cached replay history), so a hit costs a socket
 * write and no protobuf encoding.
 */
export class MemoizedResponse {
  bytes?: Buffer;
  /** The bytes framed as a gRPC message (grpc-js's 5-byte prefix first), where grpc-js lets them be kept (below). */
  framed?: Buffer;

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
  keepFramedMemoizedResponses();
}

type Framing = (this: unknown, value: unknown) => Buffer;
let framingKept = false;

/**
 * grpc-js frames every response into a buffer of its own (the 5-byte
 * prefix, then a copy of the encoded message): for a cached replay of a
 * long conversation, a megabyte allocated and copied on every request, and
 * the garbage collections that follow (docs/benchmarks.md, "Turn-start").
 * Where grpc-js frames in `BaseServerInterceptingCall.serializeMessage`
 * (1.10 on), a MemoizedResponse keeps what that gives the first time and
 * is written as the same buffer after: grpc-js never writes into a framed
 * message, and HTTP/2 only reads it. Anything else is framed by grpc-js as
 * before. Where that step is missing (another grpc-js), nothing changes but
 * the copy. Returns whether framed responses are kept.
 */
export function keepFramedMemoizedResponses(): boolean {
  const prototype = BaseServerInterceptingCall?.prototype as unknown as { serializeMessage?: Framing } | undefined;
  const frame = prototype?.serializeMessage;
  if (typeof frame !== 'function') return false;
  if (framingKept) return true;
  prototype!.serializeMessage = function (this: unknown, value: unknown): Buffer {
    return value instanceof MemoizedResponse ? (value.framed ??= frame.call(this, value)) : frame.call(this, value);
  };
  framingKept = true;
  return true;
}
