import * as grpc from '@grpc/grpc-js';
import { BaseServerInterceptingCall } from '@grpc/grpc-js/build/src/server-interceptors';
import { loadSync } from '@grpc/proto-loader';
import { findProjectFile } from '../find-project-file';
import { TOOL_HISTORY_PROTO } from './grpc-server-options';
import { keepFramedMemoizedResponses, MemoizedResponse, writeMemoizedResponses } from './memoized-response';

const LOADER = { keepCase: true, longs: String, enums: String, defaults: false, oneofs: true };
const load = () => loadSync(findProjectFile(TOOL_HISTORY_PROTO), LOADER);
type Method = { responseSerialize: (value: unknown) => Buffer; responseDeserialize: (bytes: Buffer) => unknown };
const methodOf = (pkg: ReturnType<typeof load>, name: string) =>
  (pkg['toolhistory.v1.ToolHistory'] as unknown as Record<string, Method>)[name];

const message = {
  turns: [{ run_id: 'r1', assistant_message_id: 'm1', status: 'RUN_STATUS_COMPLETED', rounds: [], messages_json: '[]' }],
  omitted: [{ run_id: 'r2', round_index: 0, sequence_index: 1, tool_call_id: 'c', tool_name: 't', reason: 'OMISSION_REASON_STALE' }],
  history_tokens: 42,
};

describe('writeMemoizedResponses', () => {
  it('writes a memoized response as the bytes plain encoding gives, encoding it once however often it is sent', () => {
    const pkg = load();
    const plain = methodOf(load(), 'GetReplayHistory').responseSerialize(message);
    const encode = jest.fn(methodOf(pkg, 'GetReplayHistory').responseSerialize);
    methodOf(pkg, 'GetReplayHistory').responseSerialize = encode;
    writeMemoizedResponses(pkg, 'toolhistory.v1.ToolHistory', ['GetReplayHistory']);
    const serialize = methodOf(pkg, 'GetReplayHistory').responseSerialize;

    const memoized = new MemoizedResponse(message);
    const first = serialize(memoized);
    const second = serialize(memoized);
    expect(first.equals(plain)).toBe(true);
    expect(second).toBe(first);
    expect(encode).toHaveBeenCalledTimes(1);
    // Empty repeated fields are not on the wire, so they do not come back.
    const { rounds: _empty, ...turn } = message.turns[0];
    expect(methodOf(pkg, 'GetReplayHistory').responseDeserialize(first)).toEqual({ ...message, turns: [turn] });
    // Anything else is encoded as before, every time.
    expect(serialize(message).equals(plain)).toBe(true);
    expect(encode).toHaveBeenCalledTimes(2);
  });

  it('refuses a method the package does not have, so a renamed RPC cannot go unnoticed', () => {
    expect(() => writeMemoizedResponses(load(), 'toolhistory.v1.ToolHistory', ['GetReplayHistorie'])).toThrow(
      'toolhistory.v1.ToolHistory/GetReplayHistorie is not in the package definition',
    );
  });
});

describe('keepFramedMemoizedResponses', () => {
  type Frame = (this: unknown, value: unknown) => Buffer;
  const frame = (value: unknown, serialize: (value: unknown) => Buffer) =>
    (BaseServerInterceptingCall.prototype as unknown as { serializeMessage: Frame }).serializeMessage.call(
      { handler: { serialize } },
      value,
    );

  it('frames a memoized response once, as grpc-js frames it, and gives the same buffer after; anything else is framed anew', () => {
    expect(keepFramedMemoizedResponses()).toBe(true);
    const pkg = load();
    writeMemoizedResponses(pkg, 'toolhistory.v1.ToolHistory', ['GetReplayHistory']);
    const serialize = methodOf(pkg, 'GetReplayHistory').responseSerialize;
    const plain = methodOf(load(), 'GetReplayHistory').responseSerialize(message);

    const memoized = new MemoizedResponse(message);
    const first = frame(memoized, serialize);
    expect(frame(memoized, serialize)).toBe(first);
    // grpc-js's prefix: not compressed, then the message's length; then the message.
    expect(first.readUInt8(0)).toBe(0);
    expect(first.readUInt32BE(1)).toBe(plain.length);
    expect(first.subarray(5).equals(plain)).toBe(true);
    const other = frame(message, serialize);
    expect(other.equals(first)).toBe(true);
    expect(other).not.toBe(frame(message, serialize));
  });

  it('answers a client with the memoized bytes, call after call, through a real server', async () => {
    const pkg = load();
    writeMemoizedResponses(pkg, 'toolhistory.v1.ToolHistory', ['GetReplayHistory']);
    const service = pkg['toolhistory.v1.ToolHistory'] as grpc.ServiceDefinition;
    const memoized = new MemoizedResponse(message);
    const server = new grpc.Server();
    server.addService(service, {
      GetReplayHistory: (_call: unknown, callback: grpc.sendUnaryData<unknown>) => callback(null, memoized),
    });
    const port = await new Promise<number>((resolve, reject) =>
      server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (error, bound) => (error ? reject(error) : resolve(bound))),
    );
    const Client = grpc.makeGenericClientConstructor(service, 'ToolHistory');
    const client = new Client(`127.0.0.1:${port}`, grpc.credentials.createInsecure()) as unknown as Record<
      string,
      (request: object, callback: (error: grpc.ServiceError | null, response: unknown) => void) => void
    >;
    try {
      const ask = () =>
        new Promise<unknown>((resolve, reject) =>
          client.GetReplayHistory({ tenant_id: 't', conversation_id: 'c' }, (error, response) =>
            error ? reject(error) : resolve(response),
          ),
        );
      const answers = [await ask(), await ask(), await ask()];
      const { rounds: _empty, ...turn } = message.turns[0];
      for (const answer of answers) expect(answer).toEqual({ ...message, turns: [turn] });
      expect(memoized.framed?.subarray(5).equals(memoized.bytes!)).toBe(true);
    } finally {
      (client as unknown as grpc.Client).close();
      server.forceShutdown();
    }
  });
});
